import { inspect } from 'node:util';
import { FakeRealtimeServer } from '@switchboard/testing';
import { EngineError } from '../../contracts/engine-error';
import { CircuitBreakerRegistry } from '../../remote/circuit-breaker-registry';
import type { SpeechToSpeechConnectOptions, SpeechToSpeechSession } from '../speech-to-speech-engine';
import { OpenAiRealtimeEngine } from './openai-realtime.engine';
import type { OpenAiRealtimeEngineOptions } from './openai-realtime.options';

const API_KEY = 'sk-test-engine-SECRET-4242';

const connectOptions: SpeechToSpeechConnectOptions = {
  callId: 'call-7',
  instructions: 'Be brief.',
  turnDetection: { type: 'server_vad' },
};

async function connectError(engine: OpenAiRealtimeEngine, options = connectOptions): Promise<EngineError> {
  try {
    const session = await engine.connect(options);
    await session.close();
  } catch (error) {
    if (error instanceof EngineError) return error;
    throw error;
  }
  throw new Error('connect succeeded; expected an EngineError');
}

describe('OpenAiRealtimeEngine.connect', () => {
  let server: FakeRealtimeServer;
  let breakers: CircuitBreakerRegistry;
  const sessions: SpeechToSpeechSession[] = [];

  const engineFor = (overrides: Partial<OpenAiRealtimeEngineOptions> = {}): OpenAiRealtimeEngine =>
    new OpenAiRealtimeEngine({
      apiKey: API_KEY,
      model: 'gpt-realtime',
      baseUrl: server.baseUrl,
      circuitBreakers: breakers,
      retryInitialDelayMs: 5,
      retryMaxDelayMs: 20,
      connectTimeoutMs: 1000,
      ...overrides,
    });

  beforeEach(async () => {
    server = new FakeRealtimeServer({ apiKey: API_KEY });
    breakers = new CircuitBreakerRegistry();
    await server.start();
  });

  afterEach(async () => {
    await Promise.all(sessions.splice(0).map((session) => session.close()));
    await server.stop();
  });

  it('connects with the bearer key and the model, and reports connect time and attempts', async () => {
    const session = await engineFor().connect(connectOptions);
    sessions.push(session);
    expect(server.upgrades).toEqual([{ path: '/v1/realtime', model: 'gpt-realtime', authorized: true, betaHeader: undefined, status: 101 }]);
    expect(session.isOpen).toBe(true);
    expect(session.callId).toBe('call-7');
    expect(session.connectTimings.attempts).toBe(1);
  });

  it('fails a wrong key with a non-retryable unauthorized error after one attempt', async () => {
    const error = await connectError(engineFor({ apiKey: 'sk-wrong' }));
    expect(error).toMatchObject({ code: 'unauthorized', retryable: false, httpStatus: 401 });
    expect(server.upgrades).toHaveLength(1);
  });

  it('retries retryable upgrade failures with backoff and then connects', async () => {
    server.rejectUpgrades(500, 2);
    const session = await engineFor({ connectAttempts: 3 }).connect(connectOptions);
    sessions.push(session);
    expect(server.upgrades.map((upgrade) => upgrade.status)).toEqual([500, 500, 101]);
    expect(session.connectTimings.attempts).toBe(3);
  });

  it('gives up after the bounded attempts with a retryable EngineError', async () => {
    server.rejectUpgrades(503, 10);
    const error = await connectError(engineFor({ connectAttempts: 3 }));
    expect(error).toMatchObject({ code: 'unavailable', retryable: true, httpStatus: 503 });
    expect(server.upgrades).toHaveLength(3);
  });

  it('retries a 429 as rate_limited', async () => {
    server.rejectUpgrades(429, 1);
    const error = await connectError(engineFor({ connectAttempts: 1 }));
    expect(error).toMatchObject({ code: 'rate_limited', retryable: true });
  });

  it('times out a connection the server never answers', async () => {
    server.stallUpgrades(2);
    const started = Date.now();
    const error = await connectError(engineFor({ connectTimeoutMs: 150, connectAttempts: 2 }));
    expect(error).toMatchObject({ code: 'timeout', retryable: true });
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(server.upgrades.map((upgrade) => upgrade.status)).toEqual([0, 0]);
  });

  it('fails an unreachable endpoint as unavailable', async () => {
    const baseUrl = server.baseUrl;
    await server.stop();
    const error = await connectError(new OpenAiRealtimeEngine({ apiKey: API_KEY, model: 'm', baseUrl, connectAttempts: 2, retryInitialDelayMs: 5, circuitBreakers: breakers }));
    expect(error).toMatchObject({ code: 'unavailable', retryable: true });
    server = new FakeRealtimeServer({ apiKey: API_KEY });
    await server.start();
  });

  it('opens the circuit for the base URL after consecutive failures, then lets a trial through', async () => {
    const settings = { connectAttempts: 1, circuitBreaker: { consecutiveFailures: 2, halfOpenAfterMs: 150 } };
    server.rejectUpgrades(500, 2);
    expect(await connectError(engineFor(settings))).toMatchObject({ code: 'unavailable' });
    expect(await connectError(engineFor(settings))).toMatchObject({ code: 'unavailable' });
    expect(breakers.stateOf(server.baseUrl)).toBe('open');

    // Another engine on the same endpoint fails fast, without touching the server.
    const fastFail = await connectError(engineFor(settings));
    expect(fastFail).toMatchObject({ code: 'circuit_open', retryable: true });
    expect(server.upgrades).toHaveLength(2);

    await new Promise((resolve) => setTimeout(resolve, 200));
    const session = await engineFor(settings).connect(connectOptions);
    sessions.push(session);
    expect(breakers.stateOf(server.baseUrl)).toBe('closed');
    expect(server.upgrades).toHaveLength(3);
  });

  it('does not count a bad key against the circuit', async () => {
    const settings = { apiKey: 'sk-wrong', connectAttempts: 1, circuitBreaker: { consecutiveFailures: 1, halfOpenAfterMs: 10_000 } };
    await connectError(engineFor(settings));
    await connectError(engineFor(settings));
    expect(breakers.stateOf(server.baseUrl)).toBe('closed');
    expect(server.upgrades).toHaveLength(2);
  });

  it('fails a rejected session configuration at connect time as bad_request, without retrying', async () => {
    const engine = engineFor();
    const connected = server.nextConnection();
    const attempt = connectError(engine);
    (await connected).sessionUpdateError = "Invalid value: 'nobody'. Supported values are: 'alloy', 'marin'.";
    const error = await attempt;
    expect(error).toMatchObject({ code: 'bad_request', retryable: false });
    expect(error.message).toContain("Invalid value: 'nobody'");
    expect(server.upgrades).toHaveLength(1);
  });

  it('stops connecting when the signal aborts', async () => {
    server.stallUpgrades(1);
    const controller = new AbortController();
    const attempt = connectError(engineFor(), { ...connectOptions, signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    expect(await attempt).toMatchObject({ code: 'cancelled', retryable: false });
  });

  it('rejects invalid connect options before opening a socket', async () => {
    const engine = engineFor();
    await expect(engine.connect({ ...connectOptions, turnDetection: { type: 'server_vad', threshold: 2 } })).rejects.toMatchObject({
      code: 'bad_request',
      message: expect.stringContaining('threshold'),
    });
    await expect(
      engine.connect({ ...connectOptions, tools: [{ name: 'has space', parametersSchema: { type: 'object' } }] }),
    ).rejects.toThrow(/tool name "has space"/);
    await expect(engine.connect({ ...connectOptions, turnDetection: { type: 'push_to_talk' } as never })).rejects.toThrow(/turnDetection.type/);
    expect(server.upgrades).toHaveLength(0);
  });

  it('rejects unusable engine options with a clear error', () => {
    expect(() => new OpenAiRealtimeEngine({ apiKey: '', model: 'm' })).toThrow(/apiKey is required/);
    expect(() => new OpenAiRealtimeEngine({ apiKey: 'k', model: 'm', baseUrl: 'https://api.openai.com/v1/realtime' })).toThrow(/ws:\/\/ or wss:\/\//);
    expect(() => new OpenAiRealtimeEngine({ apiKey: 'k', model: 'm', connectAttempts: 0 })).toThrow(/connectAttempts/);
  });

  it('never exposes the API key: not in inspect, JSON or any connect error', async () => {
    const engine = engineFor({ connectAttempts: 1 });
    expect(inspect(engine, { depth: 5 })).not.toContain(API_KEY);
    expect(JSON.stringify(engine)).not.toContain(API_KEY);
    server.rejectUpgrades(500, 1);
    server.stallUpgrades(1);
    const errors = [await connectError(engine), await connectError(engineFor({ connectAttempts: 1, connectTimeoutMs: 50 }))];
    for (const error of errors) {
      expect(`${error.message} ${inspect(error, { depth: 5 })}`).not.toContain(API_KEY);
    }
    expect(errors.map((error) => error.code)).toEqual(['unavailable', 'timeout']);
  });
});
