import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { INVALID_TRACEID, trace } from '@opentelemetry/api';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { placeCall } from '@switchboard/simulated-caller';
import { FakeOpenAiServer, freeLoopbackPort } from '@switchboard/testing';
import { encodeMulaw, sineTone } from '@switchboard/audio';
import { testDatabaseUrl, uniqueE164 } from '../support/database';
import { sample } from '../support/prometheus-text';
import { BuiltServer } from '../support/built-server';
import { CallTracing } from '../../apps/server/src/tracing/call-tracing';
import { bindAgent, dialAgent, fakePipelineEngines, speechFixture, toneSpeechFor } from '../support/conversation-agents';
import { storeSecret } from '../support/secrets';
import { eventually, startTestServer, type TestServer } from '../support/test-server';

/**
 * The OTLP exporter loads node:http with a dynamic import() when it first sends, which Jest's VM
 * refuses (it would need --experimental-vm-modules; plain Node, as in production, has no such
 * limit). Here only that loading is replaced, by a static require: the request itself is still
 * built and sent by the exporter's own transport code (URL, headers, body, timeout, response).
 */
jest.mock('../../node_modules/@opentelemetry/otlp-exporter-base/build/src/transport/http-exporter-transport', () => {
  const http = jest.requireActual<typeof import('node:http')>('node:http');
  const https = jest.requireActual<typeof import('node:https')>('node:https');
  const { sendWithHttp } = jest.requireActual('../../node_modules/@opentelemetry/otlp-exporter-base/build/src/transport/http-transport-utils');
  return {
    createHttpExporterTransport: (parameters: { url: string; headers: () => Promise<Record<string, string>>; compression: 'gzip' | 'none'; userAgent?: string }) => {
      const secure = new URL(parameters.url).protocol === 'https:';
      const agent = secure ? new https.Agent() : new http.Agent();
      return {
        send: async (data: Uint8Array, timeoutMillis: number) =>
          sendWithHttp(secure ? https.request : http.request, parameters.url, await parameters.headers(), parameters.compression, parameters.userAgent, agent, data, timeoutMillis),
        shutdown: () => agent.destroy(),
      };
    },
  };
});

/**
 * Traces end to end: the real server, configured with OTEL_EXPORTER_OTLP_ENDPOINT (OTLP/HTTP JSON),
 * exports to a collector on loopback. One pipeline call, two turns, the second one's model request
 * failing: the collector gets one call span whose trace holds the turns and, under them, the
 * engine requests, with identifiers and counts only (no number, no words), and GET /metrics counts
 * the failure by provider and step.
 */
const API_KEY_SECRET = 'tracing-e2e-openai-key';
const FAKE_API_KEY = 'sk-fake-tracing-e2e';
const CALLER = '+15550107777';
const FIRST_QUESTION = 'What time do you open tomorrow morning?';
const FIRST_ANSWER = 'We open at nine in the morning.';
const SECOND_QUESTION = 'Where is my order four five six seven?';

interface CollectedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  attributes: Record<string, unknown>;
  status: { code?: number | string };
  resource: Record<string, unknown>;
}

type OtlpAttribute = { key: string; value: Record<string, unknown> };

function attributesOf(list: OtlpAttribute[] | undefined): Record<string, unknown> {
  const plain: Record<string, unknown> = {};
  for (const { key, value } of list ?? []) {
    const scalar = value['stringValue'] ?? value['boolValue'] ?? value['intValue'] ?? value['doubleValue'];
    plain[key] = scalar ?? JSON.stringify(value['arrayValue'] ?? value);
  }
  return plain;
}

/** An OTLP/HTTP collector that takes JSON exports on /v1/traces and keeps every span. */
class FakeCollector {
  readonly spans: CollectedSpan[] = [];
  readonly contentTypes: string[] = [];
  /** Every export's body as sent (after gunzip), whatever its encoding. */
  readonly bodies: Buffer[] = [];

  private constructor(private readonly server: Server) {
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        if (req.method !== 'POST' || req.url !== '/v1/traces') {
          res.writeHead(404).end();
          return;
        }
        const contentType = req.headers['content-type'] ?? '';
        this.contentTypes.push(contentType);
        const raw = Buffer.concat(chunks);
        const body = req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
        this.bodies.push(body);
        if (contentType.startsWith('application/json')) this.collect(JSON.parse(body.toString('utf8')));
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
  }

  static async start(): Promise<FakeCollector> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return new FakeCollector(server);
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private collect(body: { resourceSpans?: { resource?: { attributes?: OtlpAttribute[] }; scopeSpans?: { spans?: Record<string, any>[] }[] }[] }): void {
    for (const resourceSpans of body.resourceSpans ?? []) {
      const resource = attributesOf(resourceSpans.resource?.attributes);
      for (const scope of resourceSpans.scopeSpans ?? []) {
        for (const span of scope.spans ?? []) {
          this.spans.push({
            traceId: span['traceId'],
            spanId: span['spanId'],
            parentSpanId: span['parentSpanId'] || undefined,
            name: span['name'],
            attributes: attributesOf(span['attributes']),
            status: span['status'] ?? {},
            resource,
          });
        }
      }
    }
  }
}

describe('OpenTelemetry traces over OTLP/HTTP JSON (e2e)', () => {
  let collector: FakeCollector;
  let openai: FakeOpenAiServer;
  let server: TestServer;
  let closed = false;
  let transcript = FIRST_QUESTION;

  beforeAll(async () => {
    collector = await FakeCollector.start();
    openai = await FakeOpenAiServer.start({
      apiKey: FAKE_API_KEY,
      transcription: () => ({ text: transcript }),
      chat: () => ({ text: [FIRST_ANSWER], usage: { promptTokens: 40, completionTokens: 9 } }),
      speech: (request) => ({ pcm: toneSpeechFor(String((request.json as { input: string }).input)) }),
    });
    server = await startTestServer({
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'switchboard-e2e',
    });
    await storeSecret(server, API_KEY_SECRET, FAKE_API_KEY);
  }, 30_000);

  afterAll(async () => {
    if (!closed) await server?.close();
    await Promise.all([collector?.close(), openai?.close()]);
  });

  it('exports one call span with its turns and their STT, LLM and TTS requests, and counts the failed one', async () => {
    expect(server.app.get(CallTracing).enabled).toBe(true);
    const { number, agentId } = await bindAgent(server, { engine: 'pipeline', config: { ...fakePipelineEngines(openai.baseUrl, API_KEY_SECRET), firstMessage: 'Hello {{caller.number}}, this is Acme.' } });
    const { call, callId } = await dialAgent(server, number, CALLER);
    const detail = () => server.api(`/v1/calls/${callId}`).then((response) => response.body);

    await call.streamAudio(speechFixture('hours'), { trailingSilenceMs: 200 });
    await eventually(detail, (body) => body.transcript?.some((turn: { text: string }) => turn.text === FIRST_ANSWER), 20_000);
    // The second question's answer fails (HTTP 400 is not retried): the caller hears the apology.
    transcript = SECOND_QUESTION;
    openai.failNext('chat', { kind: 'status', status: 400, message: 'quoted from the provider' });
    await call.streamAudio(speechFixture('order-status'), { trailingSilenceMs: 200 });
    await eventually(detail, (body) => body.transcript?.some((turn: { source: string }) => turn.source === 'apology'), 20_000);
    await call.hangup();
    await eventually(detail, (body) => body.endReason != null, 10_000);

    const metrics = await (await fetch(`${server.serverUrl}/metrics`)).text();
    expect(sample(metrics, 'switchboard_engine_errors_total{provider="custom",step="llm"}')).toBeGreaterThanOrEqual(1);

    // Closing the app flushes the batched spans to the collector.
    closed = true;
    await server.close();

    const callSpan = collector.spans.find((span) => span.name === 'call' && span.attributes['switchboard.call.id'] === callId);
    expect(callSpan).toBeDefined();
    expect(collector.contentTypes.every((type) => type.startsWith('application/json'))).toBe(true);
    expect(callSpan!.parentSpanId).toBeUndefined();
    expect(callSpan!.resource['service.name']).toBe('switchboard-e2e');
    expect(callSpan!.attributes).toMatchObject({
      'switchboard.organization.id': expect.any(String),
      'switchboard.agent.id': agentId,
      'switchboard.agent.engine': 'pipeline',
      'switchboard.call.direction': 'inbound',
      'switchboard.call.end_reason': 'stream_stopped',
    });
    const inTrace = collector.spans.filter((span) => span.traceId === callSpan!.traceId);
    const turns = inTrace.filter((span) => span.name === 'turn');
    expect(turns.length).toBeGreaterThanOrEqual(2);
    for (const turn of turns) expect(turn.parentSpanId).toBe(callSpan!.spanId);
    const turnIds = new Set(turns.map((turn) => turn.spanId));
    const [first, second] = [...turns].sort((a, b) => Number(a.attributes['switchboard.turn.index']) - Number(b.attributes['switchboard.turn.index']));
    expect(first!.attributes).toMatchObject({ 'switchboard.turn.index': 0, 'switchboard.turn.input': 'speech', 'switchboard.turn.outcome': 'replied', 'switchboard.turn.interrupted': false });
    expect(second!.attributes['switchboard.turn.index']).toBe(1);

    const engineSpans = (name: string) => inTrace.filter((span) => span.name === name);
    expect(engineSpans('stt').length).toBeGreaterThanOrEqual(2);
    for (const stt of engineSpans('stt')) expect(turnIds.has(stt.parentSpanId!)).toBe(true);
    const llm = engineSpans('llm');
    expect(llm.map((span) => span.parentSpanId)).toEqual(expect.arrayContaining([first!.spanId, second!.spanId]));
    expect(llm.find((span) => span.parentSpanId === first!.spanId)!.attributes).toMatchObject({
      'switchboard.engine.step': 'llm',
      'switchboard.engine.provider': 'custom',
      'gen_ai.request.model': 'gpt-test',
      'gen_ai.usage.input_tokens': 40,
      'gen_ai.usage.output_tokens': 9,
    });
    const failed = llm.find((span) => span.parentSpanId === second!.spanId)!;
    expect(failed.attributes).toMatchObject({ 'http.response.status_code': 400, 'error.type': 'bad_request' });
    // OTLP's JSON encoding writes the status code as its number: 2 is STATUS_CODE_ERROR.
    expect(failed.status.code).toBe(2);
    const tts = engineSpans('tts');
    // The greeting is the call's own; the answer and the apology belong to their turns.
    expect(tts.some((span) => span.parentSpanId === callSpan!.spanId)).toBe(true);
    expect(tts.some((span) => span.parentSpanId === first!.spanId)).toBe(true);
    expect(tts.some((span) => span.parentSpanId === second!.spanId)).toBe(true);
    expect(tts[0]!.attributes).toMatchObject({ 'switchboard.engine.provider': 'custom', 'gen_ai.request.model': 'tts-test' });

    // Tenant data stays out of the trace: not the caller's number, not a word said.
    const values = inTrace.flatMap((span) => Object.values(span.attributes).map(String));
    for (const secret of [CALLER, CALLER.slice(1), FIRST_QUESTION, FIRST_ANSWER, SECOND_QUESTION, 'quoted from the provider', 'Acme']) {
      expect(values.filter((value) => value.includes(secret))).toEqual([]);
    }
  }, 90_000);
});

describe('without OTEL_EXPORTER_OTLP_ENDPOINT (e2e)', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ OTEL_EXPORTER_OTLP_ENDPOINT: undefined, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: undefined });
  }, 30_000);

  afterAll(async () => server?.close());

  it('registers no tracer provider: the OpenTelemetry API stays a no-op', async () => {
    expect(server.app.get(CallTracing).enabled).toBe(false);
    expect(trace.getTracer('probe').startSpan('probe').spanContext().traceId).toBe(INVALID_TRACEID);
    const metrics = await (await fetch(`${server.serverUrl}/metrics`)).text();
    expect(metrics).toMatch(/^# TYPE switchboard_engine_errors_total counter$/m);
  });
});

/**
 * The same as operators run it: main.ts in a process of its own (so the exporter is the real one,
 * nothing of it replaced), OTLP's default protocol (protobuf), an echo call placed by the simulated
 * Twilio caller, then SIGTERM: the drain and the shutdown flush the call's span to the collector.
 * Protobuf writes a string attribute's bytes as they are, so the call id is found in the export
 * and the caller's number must not be.
 */
describe('the server in its own process exports over OTLP/HTTP protobuf (e2e)', () => {
  let collector: FakeCollector;
  let server: BuiltServer;
  let dataDir: string;

  beforeAll(async () => {
    collector = await FakeCollector.start();
    dataDir = mkdtempSync(join(tmpdir(), 'switchboard-tracing-'));
  });

  afterAll(async () => {
    if (server?.child.exitCode === null) server.child.kill('SIGKILL');
    await collector?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('sends the call span with the real exporter when the call ends and the server stops', async () => {
    const port = await freeLoopbackPort();
    const baseUrl = `http://127.0.0.1:${port}`;
    const echoNumber = uniqueE164();
    const twilio = { authToken: 'tracing-e2e-twilio-token-0000000', accountSid: `AC${'7'.repeat(32)}` };
    server = BuiltServer.spawn({
      PORT: String(port),
      PUBLIC_BASE_URL: baseUrl,
      DATABASE_URL: testDatabaseUrl(),
      MIGRATE_ON_START: 'false',
      DATA_DIR: dataDir,
      TWILIO_ACCOUNT_SID: twilio.accountSid,
      TWILIO_AUTH_TOKEN: twilio.authToken,
      ECHO_AGENT_NUMBER: echoNumber,
      WORKERS: '1',
      DRAIN_MIN_S: '0',
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_SERVICE_NAME: 'switchboard-process-e2e',
    });
    await server.healthy(baseUrl, 90_000);
    const result = await placeCall({
      serverUrl: baseUrl,
      ...twilio,
      from: CALLER,
      to: echoNumber,
      audio: encodeMulaw(sineTone({ frequencyHz: 440, durationMs: 600, sampleRate: 8000, amplitudeDbfs: -12 })),
      trailingSilenceMs: 200,
    });
    const callId = result.twiml?.stream?.parameters['callId'];
    expect(callId).toEqual(expect.any(String));

    const exited = new Promise<number | null>((resolve) => server.child.once('exit', (code) => resolve(code)));
    server.child.kill('SIGTERM');
    expect(await exited).toBe(0);

    expect(collector.contentTypes.length).toBeGreaterThan(0);
    expect(collector.contentTypes.every((type) => type === 'application/x-protobuf')).toBe(true);
    const exported = Buffer.concat(collector.bodies);
    expect(exported.includes(Buffer.from(callId!))).toBe(true);
    expect(exported.includes(Buffer.from('switchboard-process-e2e'))).toBe(true);
    expect(exported.includes(Buffer.from('stream_stopped'))).toBe(true);
    expect(exported.includes(Buffer.from(CALLER.slice(1)))).toBe(false);
  }, 120_000);
});
