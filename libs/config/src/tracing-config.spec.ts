import { ConfigValidationError, loadAppConfig } from './app-config';
import { parseKeyValueList } from './tracing-config';

describe('tracing configuration (OTEL_* variables)', () => {
  it('is off without an endpoint', () => {
    expect(loadAppConfig({}).tracing).toBeUndefined();
    expect(loadAppConfig({ OTEL_SERVICE_NAME: 'voice', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }).tracing).toBeUndefined();
  });

  it('appends v1/traces to the generic endpoint and defaults to protobuf, switchboard and parent-based always-on', () => {
    expect(loadAppConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).tracing).toEqual({
      tracesUrl: 'http://collector:4318/v1/traces',
      protocol: 'http/protobuf',
      headers: {},
      serviceName: 'switchboard',
      resourceAttributes: {},
      sampler: 'parentbased_always_on',
      samplerRatio: 1,
    });
    expect(loadAppConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otlp.example.com/base/' }).tracing?.tracesUrl).toBe('https://otlp.example.com/base/v1/traces');
  });

  it('lets the traces-specific variables win, and uses the traces endpoint as it is', () => {
    const tracing = loadAppConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://traces.example.com:4318/custom/path',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=generic,x-tenant=a%20b',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-api-key=specific',
      OTEL_SERVICE_NAME: 'voice-edge',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=prod',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
    }).tracing;
    expect(tracing).toEqual({
      tracesUrl: 'http://traces.example.com:4318/custom/path',
      protocol: 'http/json',
      headers: { 'x-api-key': 'specific', 'x-tenant': 'a b' },
      serviceName: 'voice-edge',
      resourceAttributes: { 'deployment.environment': 'prod' },
      sampler: 'parentbased_traceidratio',
      samplerRatio: 0.25,
    });
  });

  it('is off with OTEL_SDK_DISABLED=true, whatever else is set', () => {
    expect(loadAppConfig({ OTEL_SDK_DISABLED: 'TRUE', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).tracing).toBeUndefined();
    expect(loadAppConfig({ OTEL_SDK_DISABLED: 'no', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).tracing).toBeDefined();
  });

  it('refuses gRPC, unknown samplers, bad ratios and malformed headers, without echoing a header value', () => {
    let error: unknown;
    try {
      loadAppConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4317',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
        OTEL_EXPORTER_OTLP_HEADERS: 'authorization',
        OTEL_TRACES_SAMPLER: 'jaeger_remote',
        OTEL_TRACES_SAMPLER_ARG: '2',
      });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigValidationError);
    const problems = (error as ConfigValidationError).problems.join('\n');
    for (const name of ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_PROTOCOL', 'OTEL_EXPORTER_OTLP_HEADERS', 'OTEL_TRACES_SAMPLER', 'OTEL_TRACES_SAMPLER_ARG']) {
      expect(problems).toContain(`${name}:`);
    }
    expect(problems).toMatch(/gRPC is not supported/);
    expect(problems).not.toContain('authorization');
  });

  it('parses key=value lists as the specification writes them', () => {
    expect(parseKeyValueList(' a = 1 , b=x%2Cy,, ')).toEqual({ a: '1', b: 'x,y' });
    expect(parseKeyValueList('')).toEqual({});
    expect(parseKeyValueList('=1')).toBeUndefined();
    expect(parseKeyValueList('a=%E0%A4%A')).toBeUndefined();
  });
});
