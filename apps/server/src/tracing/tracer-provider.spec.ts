import { INVALID_TRACEID, ROOT_CONTEXT, SpanKind, trace, TraceFlags } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import type { AppConfig, TracingConfig } from '@switchboard/config';
import { CallTracing } from './call-tracing';
import { samplerFor, startTracing } from './tracer-provider';
import { TracingModule } from './tracing.module';

const CONFIG: TracingConfig = {
  tracesUrl: 'http://127.0.0.1:4318/v1/traces',
  protocol: 'http/json',
  headers: {},
  serviceName: 'switchboard-test',
  resourceAttributes: { 'deployment.environment': 'test' },
  sampler: 'parentbased_always_on',
  samplerRatio: 1,
};

/** What a library tracing through the global API gets now: a real trace id only with a provider registered. */
function globalTracerRecords(): boolean {
  return trace.getTracer('probe').startSpan('probe').spanContext().traceId !== INVALID_TRACEID;
}

describe('the tracer provider', () => {
  afterEach(() => trace.disable());

  it('is not created, nor registered, without tracing configured', () => {
    const provider = TracingModule.forRoot({ tracing: undefined } as AppConfig).providers![0] as { useFactory: () => CallTracing };
    const tracing = provider.useFactory();
    expect(tracing.enabled).toBe(false);
    expect(globalTracerRecords()).toBe(false);
  });

  it('is registered globally while the app runs, flushes its queue on shutdown and unregisters', async () => {
    const exporter = new InMemorySpanExporter();
    const runtime = startTracing(CONFIG, exporter);
    expect(globalTracerRecords()).toBe(true);
    runtime.tracer.startSpan('call').end();
    // Batched: nothing has left yet.
    expect(exporter.getFinishedSpans()).toHaveLength(0);
    const [span] = await new Promise<ReturnType<InMemorySpanExporter['getFinishedSpans']>>((resolve) => {
      const export_ = exporter.export.bind(exporter);
      exporter.export = (spans, done) => {
        export_(spans, done);
        resolve([...spans]);
      };
      void runtime.shutdown();
    });
    expect(span!.name).toBe('call');
    expect(span!.resource.attributes).toMatchObject({ 'service.name': 'switchboard-test', 'deployment.environment': 'test' });
    expect(globalTracerRecords()).toBe(false);
  });

  it('leaves a provider registered by another server in the process alone', async () => {
    const first = startTracing(CONFIG, new InMemorySpanExporter());
    const second = startTracing(CONFIG, new InMemorySpanExporter());
    await second.shutdown();
    expect(globalTracerRecords()).toBe(true);
    await first.shutdown();
    expect(globalTracerRecords()).toBe(false);
  });

  it('samples as OTEL_TRACES_SAMPLER says', () => {
    const decide = (name: Parameters<typeof samplerFor>[0], ratio: number, parentSampled?: boolean) => {
      const parent = parentSampled === undefined ? ROOT_CONTEXT : trace.setSpanContext(ROOT_CONTEXT, { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceFlags: parentSampled ? TraceFlags.SAMPLED : TraceFlags.NONE });
      return samplerFor(name, ratio).shouldSample(parent, 'f'.repeat(32), 'call', SpanKind.SERVER, {}, []).decision;
    };
    expect(decide('always_on', 0)).toBe(2);
    expect(decide('always_off', 1)).toBe(0);
    expect(decide('traceidratio', 0)).toBe(0);
    expect(decide('traceidratio', 1)).toBe(2);
    expect(decide('parentbased_traceidratio', 0)).toBe(0);
    expect(decide('parentbased_traceidratio', 0, true)).toBe(2);
    expect(decide('parentbased_always_off', 1, true)).toBe(2);
    expect(decide('parentbased_always_on', 1, false)).toBe(0);
  });
});
