import { FakeOpenAiServer } from '@switchboard/testing';
import { EngineError } from '../../contracts';
import { CircuitBreakerRegistry } from '../../remote/circuit-breaker-registry';
import type { RemotePolicyOverrides } from '../../remote/remote-policy-options';
import type { TtsStream } from '../tts-engine';
import { OpenAiSpeechTts, type OpenAiSpeechTtsOptions } from './openai-speech-tts';

const API_KEY = 'sk-speech-0123456789';
const FAST_POLICY: RemotePolicyOverrides = {
  timeouts: { connectTimeoutMs: 1_000, firstByteTimeoutMs: 1_000, idleTimeoutMs: 1_000, totalTimeoutMs: 5_000 },
  retry: { maxRetries: 2, initialDelayMs: 10, maxDelayMs: 40, maxRetryAfterMs: 1_000 },
};

/** 0.5 s of a 440 Hz tone at 24 kHz: every sample distinct enough to catch a byte slip. */
function tone(sampleCount = 12_000): Int16Array {
  return Int16Array.from({ length: sampleCount }, (_, i) => Math.round(12_000 * Math.sin((2 * Math.PI * 440 * i) / 24_000)) + (i % 7));
}

interface Drained {
  chunks: Int16Array[];
  error?: EngineError;
}

async function drain(stream: TtsStream, stopAfter = Number.POSITIVE_INFINITY): Promise<Drained> {
  const drained: Drained = { chunks: [] };
  try {
    for await (const chunk of stream) {
      drained.chunks.push(chunk);
      if (drained.chunks.length >= stopAfter) break;
    }
  } catch (error) {
    if (!(error instanceof EngineError)) throw error;
    drained.error = error;
  }
  return drained;
}

const joined = (chunks: Int16Array[]) => Int16Array.from(chunks.flatMap((chunk) => Array.from(chunk)));

describe('OpenAiSpeechTts against a real local OpenAI-compatible server', () => {
  const pcm = tone();
  let server: FakeOpenAiServer;

  beforeEach(async () => {
    server = await FakeOpenAiServer.start({ apiKey: API_KEY, speech: { pcm, chunkBytes: [1001, 4096, 333, 1, 2, 7], chunkDelayMs: 3 } });
  });

  afterEach(async () => {
    await server.close();
  });

  const engine = (overrides: Partial<OpenAiSpeechTtsOptions> = {}) =>
    new OpenAiSpeechTts({
      baseUrl: server.baseUrl,
      apiKey: API_KEY,
      model: 'tts-1',
      voice: 'nova',
      policy: FAST_POLICY,
      circuitBreakers: new CircuitBreakerRegistry(),
      logger: { warn: () => undefined },
      ...overrides,
    });

  it('streams the PCM exactly, in pieces as they arrive, across odd byte boundaries', async () => {
    const tts = engine();
    expect(tts.sampleRate).toBe(24_000);
    const stream = tts.synthesize('Your order ships tomorrow.', { callId: 'call-1' });
    const { chunks, error } = await drain(stream);
    expect(error).toBeUndefined();
    expect(chunks.length).toBeGreaterThan(5);
    expect(joined(chunks)).toEqual(pcm);
    const result = await stream.result;
    expect(result).toMatchObject({ characters: 'Your order ships tomorrow.'.length, audioSeconds: 0.5 });
    expect(result.timings.attempts).toBe(1);
    expect(result.timings.firstResultMs).toBeLessThanOrEqual(result.timings.totalMs);

    const [sent] = server.requestsTo('speech');
    expect(sent!.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(sent!.json).toEqual({ model: 'tts-1', input: 'Your order ships tomorrow.', voice: 'nova', response_format: 'pcm' });
  });

  it('uses the voice of the request, speed and instructions when given', async () => {
    await drain(engine({ speed: 1.25, instructions: 'Calm and warm.' }).synthesize('Hi.', { callId: 'c', voice: 'onyx' }));
    expect(server.requestsTo('speech')[0]!.json).toMatchObject({ voice: 'onyx', speed: 1.25, instructions: 'Calm and warm.' });
  });

  it('yields the first audio before the rest has arrived (first-byte time well under the total)', async () => {
    server.speech = { pcm, chunkBytes: [4800], chunkDelayMs: 80 };
    const stream = engine().synthesize('A longer sentence.', { callId: 'c' });
    await drain(stream);
    const { timings } = await stream.result;
    expect(timings.totalMs - timings.firstResultMs!).toBeGreaterThan(250);
  });

  it('retries failures before any audio (500, reset, stall before the first byte)', async () => {
    server
      .failNext('speech', { kind: 'status', status: 500 })
      .failNext('speech', { kind: 'reset' });
    const stream = engine().synthesize('Hello.', { callId: 'c' });
    expect(joined((await drain(stream)).chunks)).toEqual(pcm);
    expect((await stream.result).timings.attempts).toBe(3);

    server.failNext('speech', { kind: 'stall', afterChunks: 0 });
    const stalled = engine({ policy: { ...FAST_POLICY, timeouts: { ...FAST_POLICY.timeouts, firstByteTimeoutMs: 150 } } }).synthesize('Hello.', { callId: 'c' });
    expect(joined((await drain(stalled)).chunks)).toEqual(pcm);
    expect((await stalled.result).timings.attempts).toBe(2);
  });

  it('never retries once audio was yielded: a mid-stream stall is an idle timeout for the caller', async () => {
    server.failNext('speech', { kind: 'stall', afterChunks: 2 });
    const stream = engine({ policy: { ...FAST_POLICY, timeouts: { ...FAST_POLICY.timeouts, idleTimeoutMs: 150 } } }).synthesize('Hello.', { callId: 'c' });
    const { chunks, error } = await drain(stream);
    // 1001 + 4096 bytes arrived: 2548 whole samples, exactly the start of the tone.
    expect(joined(chunks)).toEqual(pcm.subarray(0, 2548));
    expect(error).toMatchObject({ code: 'timeout', retryable: true });
    await expect(stream.result).rejects.toMatchObject({ code: 'timeout' });
    expect(server.requestsTo('speech')).toHaveLength(1);
  });

  it('rejects a 200 that is not audio as malformed_response, without retrying', async () => {
    server.failNext('speech', { kind: 'malformed' });
    const stream = engine().synthesize('Hello.', { callId: 'c' });
    expect((await drain(stream)).error).toMatchObject({ code: 'malformed_response', retryable: false });
    expect(server.requestsTo('speech')).toHaveLength(1);
  });

  it('maps 401 and 429 with a long Retry-After to non-retried errors', async () => {
    expect((await drain(engine({ apiKey: 'sk-nope-nope-nope' }).synthesize('Hi.', { callId: 'c' }))).error).toMatchObject({ code: 'unauthorized' });
    server.failNext('speech', { kind: 'status', status: 429, retryAfter: '60' });
    expect((await drain(engine().synthesize('Hi.', { callId: 'c' }))).error).toMatchObject({ code: 'rate_limited', retryAfterMs: 60_000 });
    expect(server.requestsTo('speech')).toHaveLength(2);
  });

  it('cancel() stops the download: the loop ends quietly, result rejects with cancelled, the response is closed', async () => {
    server.speech = { pcm, chunkBytes: [2000], chunkDelayMs: 40 };
    const stream = engine().synthesize('Hello there.', { callId: 'c' });
    const chunks: Int16Array[] = [];
    for await (const chunk of stream) {
      chunks.push(chunk);
      if (chunks.length === 2) stream.cancel();
    }
    expect(chunks.length).toBeLessThanOrEqual(3);
    await expect(stream.result).rejects.toMatchObject({ code: 'cancelled', retryable: false });
    await waitFor(() => server.responsesInFlight === 0);
  });

  it('an abort signal cancels like cancel(), and breaking out of the loop does too', async () => {
    server.speech = { pcm, chunkBytes: [2000], chunkDelayMs: 40 };
    const controller = new AbortController();
    const aborted = engine().synthesize('Hello there.', { callId: 'c', signal: controller.signal });
    setTimeout(() => controller.abort(), 60);
    await drain(aborted);
    await expect(aborted.result).rejects.toMatchObject({ code: 'cancelled' });

    const abandoned = engine().synthesize('Hello there.', { callId: 'c' });
    await drain(abandoned, 1);
    await expect(abandoned.result).rejects.toMatchObject({ code: 'cancelled' });
    await waitFor(() => server.responsesInFlight === 0);
  });

  it('answers empty text with no audio and no request, and refuses over-long text', async () => {
    const empty = engine().synthesize('   ', { callId: 'c' });
    expect((await drain(empty)).chunks).toEqual([]);
    await expect(empty.result).resolves.toMatchObject({ characters: 0, audioSeconds: 0 });
    const long = engine({ maxInputChars: 10 }).synthesize('This is far too long.', { callId: 'c' });
    expect((await drain(long)).error).toMatchObject({ code: 'bad_request', retryable: false });
    expect(server.requests).toHaveLength(0);
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 2_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
