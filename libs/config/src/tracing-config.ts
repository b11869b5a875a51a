import type { Environment } from './environment.schema';

/** The samplers OTEL_TRACES_SAMPLER may name (the ones the SDK builds without a remote service). */
export const TRACES_SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'] as const;

export type TracesSamplerName = (typeof TRACES_SAMPLERS)[number];
export type OtlpHttpProtocol = 'http/protobuf' | 'http/json';

/** Where and how this process exports its traces; undefined in AppConfig when tracing is off. */
export interface TracingConfig {
  /** The full URL spans are POSTed to. */
  tracesUrl: string;
  protocol: OtlpHttpProtocol;
  /** Sent with every export (a hosted backend's API key); a secret: never logged. */
  headers: Record<string, string>;
  serviceName: string;
  /** OTEL_RESOURCE_ATTRIBUTES (service.name comes from serviceName). */
  resourceAttributes: Record<string, string>;
  sampler: TracesSamplerName;
  /** The traceidratio samplers' fraction of traces kept. */
  samplerRatio: number;
}

/**
 * Reads the OpenTelemetry exporter variables the way the specification defines them. The
 * signal-specific variable wins over the generic one; the generic endpoint is a base URL that
 * gets `v1/traces` appended, the traces endpoint is used as it is. Tracing is off (undefined)
 * without an endpoint, or with OTEL_SDK_DISABLED=true.
 */
export function tracingConfigOf(e: Environment): TracingConfig | undefined {
  if (e.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined;
  const tracesUrl = e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? (e.OTEL_EXPORTER_OTLP_ENDPOINT === undefined ? undefined : appendTracesPath(e.OTEL_EXPORTER_OTLP_ENDPOINT));
  if (tracesUrl === undefined) return undefined;
  return {
    tracesUrl,
    protocol: e.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? e.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf',
    // Per key, the traces-specific list wins.
    headers: { ...parseKeyValueList(e.OTEL_EXPORTER_OTLP_HEADERS ?? ''), ...parseKeyValueList(e.OTEL_EXPORTER_OTLP_TRACES_HEADERS ?? '') },
    serviceName: e.OTEL_SERVICE_NAME ?? 'switchboard',
    resourceAttributes: parseKeyValueList(e.OTEL_RESOURCE_ATTRIBUTES ?? '') ?? {},
    sampler: e.OTEL_TRACES_SAMPLER ?? 'parentbased_always_on',
    samplerRatio: e.OTEL_TRACES_SAMPLER_ARG ?? 1,
  };
}

function appendTracesPath(base: string): string {
  return base.endsWith('/') ? `${base}v1/traces` : `${base}/v1/traces`;
}

/**
 * `key1=value1,key2=value2` with URL-encoded values, the format of OTEL_EXPORTER_OTLP_HEADERS and
 * OTEL_RESOURCE_ATTRIBUTES. Undefined when an entry has no key, no `=`, or a bad %-escape.
 */
export function parseKeyValueList(text: string): Record<string, string> | undefined {
  const pairs: Record<string, string> = {};
  for (const entry of text.split(',')) {
    if (entry.trim() === '') continue;
    const equals = entry.indexOf('=');
    if (equals <= 0) return undefined;
    const key = entry.slice(0, equals).trim();
    if (key === '') return undefined;
    try {
      pairs[key] = decodeURIComponent(entry.slice(equals + 1).trim());
    } catch {
      return undefined;
    }
  }
  return pairs;
}
