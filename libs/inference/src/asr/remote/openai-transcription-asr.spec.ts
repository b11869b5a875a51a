import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readWav } from '@switchboard/audio';
import { FakeOpenAiServer } from '@switchboard/testing';
import { CircuitBreakerRegistry } from '../../remote/circuit-breaker-registry';
import type { RemotePolicyOverrides } from '../../remote/remote-policy-options';
import { OpenAiTranscriptionAsr, type OpenAiTranscriptionAsrOptions } from './openai-transcription-asr';

const API_KEY = 'gsk-transcribe-0123456789';
const FIXTURE = join(__dirname, '../../../../../test/fixtures/speech/hours.16k.wav');
const FAST_POLICY: RemotePolicyOverrides = {
  timeouts: { connectTimeoutMs: 1_000, firstByteTimeoutMs: 1_000, idleTimeoutMs: 1_000, totalTimeoutMs: 5_000 },
  retry: { maxRetries: 2, initialDelayMs: 10, maxDelayMs: 40, maxRetryAfterMs: 1_000 },
};

/** Pushes `samples` in 20 ms frames through one reused buffer, as the media path does. */
function pushInFrames(session: { pushAudio(pcm: Int16Array): void }, samples: Int16Array): void {
  const frame = new Int16Array(320);
  for (let offset = 0; offset < samples.length; offset += frame.length) {
    const piece = samples.subarray(offset, offset + frame.length);
    frame.set(piece);
    session.pushAudio(piece.length === frame.length ? frame : frame.subarray(0, piece.length));
  }
}

describe('OpenAiTranscriptionAsr against a real local OpenAI-compatible server', () => {
  const speech = readWav(readFileSync(FIXTURE));
  let server: FakeOpenAiServer;

  beforeAll(() => {
    expect(speech.sampleRate).toBe(16_000);
  });

  beforeEach(async () => {
    server = await FakeOpenAiServer.start({ apiKey: API_KEY, transcription: { text: ' We are open nine to five. ', language: 'en' } });
  });

  afterEach(async () => {
    await server.close();
  });

  const engine = (overrides: Partial<OpenAiTranscriptionAsrOptions> = {}) =>
    new OpenAiTranscriptionAsr({
      baseUrl: server.baseUrl,
      apiKey: API_KEY,
      model: 'whisper-large-v3',
      policy: FAST_POLICY,
      circuitBreakers: new CircuitBreakerRegistry(),
      logger: { warn: () => undefined },
      ...overrides,
    });

  it('uploads the utterance as a 16 kHz mono WAV and returns the trimmed transcript with timings', async () => {
    const asr = engine({ language: 'en', prompt: 'Opening hours' });
    expect(asr).toMatchObject({ sampleRate: 16_000, supportsPartials: false });
    const session = asr.createSession({ callId: 'call-1' });
    pushInFrames(session, speech.samples);
    const result = await session.finish();

    expect(result.text).toBe('We are open nine to five.');
    expect(result.language).toBe('en');
    expect(result.audioSeconds).toBeCloseTo(speech.samples.length / 16_000, 6);
    expect(result.timings.attempts).toBe(1);
    expect(result.timings.firstResultMs).toBeGreaterThan(0);

    const [sent] = server.requestsTo('transcriptions');
    expect(sent!.path).toBe('/v1/audio/transcriptions');
    expect(sent!.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(sent!.form).toEqual({ model: 'whisper-large-v3', response_format: 'json', language: 'en', prompt: 'Opening hours' });
    expect(sent!.fileName).toBe('audio.wav');
    expect(sent!.fileType).toBe('audio/wav');
    expect(sent!.wav).toMatchObject({ sampleRate: 16_000, channelCount: 1, sourceEncoding: 'pcm16' });
    // Every sample arrived, in order, although the frames were pushed through one reused buffer.
    expect(Buffer.from(sent!.wav!.samples.buffer).equals(Buffer.from(speech.samples.buffer, speech.samples.byteOffset, speech.samples.byteLength))).toBe(true);
  });

  it('takes the language and prompt of the session over the engine defaults, and works with a base URL without /v1', async () => {
    const session = engine({ baseUrl: server.origin, language: 'en' }).createSession({ callId: 'c', language: 'de', prompt: 'Bestellnummer' });
    session.pushAudio(speech.samples.subarray(0, 16_000));
    await session.finish();
    expect(server.requestsTo('transcriptions')[0]!.form).toMatchObject({ language: 'de', prompt: 'Bestellnummer' });
  });

  it('returns an empty transcript without a request when no audio was pushed', async () => {
    const result = await engine().createSession({ callId: 'c' }).finish();
    expect(result).toMatchObject({ text: '', audioSeconds: 0 });
    expect(server.requests).toHaveLength(0);
  });

  it('retries a 503 and a connection reset, then succeeds', async () => {
    server.failNext('transcriptions', { kind: 'status', status: 503 }).failNext('transcriptions', { kind: 'reset' });
    const session = engine().createSession({ callId: 'c' });
    session.pushAudio(speech.samples);
    const result = await session.finish();
    expect(result.text).toBe('We are open nine to five.');
    expect(result.timings.attempts).toBe(3);
    // Each attempt uploaded the whole utterance again.
    expect(server.requestsTo('transcriptions').map((request) => request.wav?.samples.length)).toEqual([
      speech.samples.length,
      speech.samples.length,
      speech.samples.length,
    ]);
  });

  it('retries a body cut off halfway, which is a connection failure, not a bad answer', async () => {
    server.failNext('transcriptions', { kind: 'reset', afterChunks: 1 });
    const session = engine().createSession({ callId: 'c' });
    session.pushAudio(speech.samples);
    await expect(session.finish()).resolves.toMatchObject({ text: 'We are open nine to five.', timings: { attempts: 2 } });
  });

  it('fails with unauthorized on a wrong key, once, without the key in the message', async () => {
    const session = engine({ apiKey: 'gsk-wrong-wrong-wrong' }).createSession({ callId: 'c' });
    session.pushAudio(speech.samples);
    const error = await session.finish().catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'unauthorized', retryable: false });
    expect(String((error as Error).message)).not.toContain('gsk-wrong-wrong-wrong');
    expect(server.requestsTo('transcriptions')).toHaveLength(1);
  });

  it('fails with malformed_response on a cut-off JSON body, without retrying', async () => {
    server.failNext('transcriptions', { kind: 'malformed' });
    const session = engine().createSession({ callId: 'c' });
    session.pushAudio(speech.samples);
    await expect(session.finish()).rejects.toMatchObject({ code: 'malformed_response', retryable: false });
    expect(server.requestsTo('transcriptions')).toHaveLength(1);
  });

  it('times out a server that stalls mid-body and retries it', async () => {
    server.failNext('transcriptions', { kind: 'stall', afterChunks: 1 });
    const session = engine({ policy: { ...FAST_POLICY, timeouts: { ...FAST_POLICY.timeouts, idleTimeoutMs: 150 } } }).createSession({ callId: 'c' });
    session.pushAudio(speech.samples);
    await expect(session.finish()).resolves.toMatchObject({ timings: { attempts: 2 } });
  });

  it('cancel() during the request rejects finish() with cancelled', async () => {
    server.transcription = { text: 'slow', delayMs: 2_000 };
    const session = engine().createSession({ callId: 'c' });
    session.pushAudio(speech.samples);
    const finishing = session.finish();
    setTimeout(() => session.cancel(), 100);
    await expect(finishing).rejects.toMatchObject({ code: 'cancelled', retryable: false });
  });

  it('refuses audio pushed after finish, and an utterance over maxAudioSeconds, with clear errors', async () => {
    const session = engine({ maxAudioSeconds: 1 }).createSession({ callId: 'c' });
    session.pushAudio(speech.samples.subarray(0, 12_000));
    session.pushAudio(speech.samples.subarray(0, 12_000));
    await expect(session.finish()).rejects.toMatchObject({ code: 'bad_request', message: expect.stringContaining('1 s limit') });
    expect(() => session.pushAudio(new Int16Array(320))).toThrow(/after the session was finished/);
    expect(server.requests).toHaveLength(0);
  });
});
