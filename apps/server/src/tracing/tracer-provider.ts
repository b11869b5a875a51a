import { trace, type Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter as OtlpJsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtobufTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type Sampler,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { TracesSamplerName, TracingConfig } from '@switchboard/config';

/** The instrumentation scope every Switchboard span is created under. */
export const TRACER_NAME = 'switchboard';

/**
 * Spans waiting for export, at most: past this, new spans are dropped (the BatchSpanProcessor
 * counts them) rather than let a collector outage grow the heap. A call makes a few dozen spans.
 */
const MAX_QUEUED_SPANS = 4096;
const MAX_EXPORT_BATCH = 512;
/** Shutdown waits this long at most for the last spans to leave: a dead collector must not hold the exit. */
const SHUTDOWN_FLUSH_BOUND_MS = 5_000;

/** This process's tracer provider while tracing is on. */
export interface TracingRuntime {
  readonly tracer: Tracer;
  /** Exports what is queued, then stops; bounded (SHUTDOWN_FLUSH_BOUND_MS). */
  shutdown(): Promise<void>;
}

/**
 * Builds the tracer provider for TRACING config: a batch processor with a bounded queue in front
 * of the OTLP/HTTP exporter (protobuf, or JSON). The provider is also registered as the global
 * one (for any library that traces through @opentelemetry/api), when no other is: a second server
 * in one process (tests) keeps its own. No context manager is installed: Switchboard's spans name
 * their parents explicitly, so nothing depends on async context propagation.
 */
export function startTracing(config: TracingConfig, exporter: SpanExporter = otlpExporterFor(config)): TracingRuntime {
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ ...config.resourceAttributes, [ATTR_SERVICE_NAME]: config.serviceName }),
    sampler: samplerFor(config.sampler, config.samplerRatio),
    spanProcessors: [new BatchSpanProcessor(exporter, { maxQueueSize: MAX_QUEUED_SPANS, maxExportBatchSize: MAX_EXPORT_BATCH })],
  });
  const registered = trace.setGlobalTracerProvider(provider);
  let stopped: Promise<void> | undefined;
  return {
    tracer: provider.getTracer(TRACER_NAME),
    shutdown: () => {
      stopped ??= (async () => {
        if (registered) trace.disable();
        let timer: NodeJS.Timeout | undefined;
        const bound = new Promise<void>((resolve) => (timer = setTimeout(resolve, SHUTDOWN_FLUSH_BOUND_MS).unref()));
        await Promise.race([provider.shutdown().catch(() => undefined), bound]);
        clearTimeout(timer);
      })();
      return stopped;
    },
  };
}

function otlpExporterFor(config: TracingConfig): SpanExporter {
  // Explicit options win over the exporter's own reading of OTEL_* (it still reads the rest:
  // OTEL_EXPORTER_OTLP_TIMEOUT, _COMPRESSION, _CERTIFICATE ...).
  const options = { url: config.tracesUrl, headers: config.headers };
  return config.protocol === 'http/json' ? new OtlpJsonTraceExporter(options) : new OtlpProtobufTraceExporter(options);
}

/** OTEL_TRACES_SAMPLER's values, as the specification defines them. */
export function samplerFor(name: TracesSamplerName, ratio: number): Sampler {
  switch (name) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio);
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) });
  }
}
