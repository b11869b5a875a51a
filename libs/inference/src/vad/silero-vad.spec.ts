import { rmsDbfs } from '@switchboard/audio';
import { EngineError } from '../contracts';
import { createInferenceRuntime, type OnnxInferenceRuntime } from '../runtime';
import { SileroVad } from './silero-vad';
import { SileroVadStream } from './silero-vad-stream';
import { concatSpeech as concat, loadSpeech8k, pushInFrames, silence, silentLogger, SPEECH_FIXTURES, speechBoundsMs, whiteNoise } from '@switchboard/testing';
import type { VadFrame } from './vad-frame';
import { pushAndCollect } from './vad-listeners';

jest.setTimeout(60_000);

describe('SileroVad (real v5 weights, 8 kHz, through the inference runtime)', () => {
  let runtime: OnnxInferenceRuntime;
  let vad: SileroVad;

  beforeAll(async () => {
    runtime = await createInferenceRuntime({ device: 'cpu', workers: 1, logger: silentLogger });
    vad = await SileroVad.load(runtime);
  });
  afterAll(() => runtime.close());

  async function framesOf(callId: string, pcm: Int16Array, frameSamples = 160): Promise<VadFrame[]> {
    const stream = vad.createStream(callId);
    const frames: VadFrame[] = [];
    await pushInFrames(async (chunk) => frames.push(...(await pushAndCollect(stream, chunk))), pcm, frameSamples);
    stream.close();
    return frames;
  }

  it.each(SPEECH_FIXTURES)('finds the speech in %s within 100 ms of where its energy says it is', async (name) => {
    const pcm = loadSpeech8k(name);
    const truth = speechBoundsMs(pcm);
    const frames = await framesOf(name, pcm);
    const speech = frames.filter((frame) => frame.probability >= 0.5);
    expect(speech.length).toBeGreaterThan(0);
    const detectedStartMs = speech[0]!.startMs;
    const detectedEndMs = speech[speech.length - 1]!.endMs;
    expect(Math.abs(detectedStartMs - truth.startMs)).toBeLessThanOrEqual(100);
    expect(Math.abs(detectedEndMs - truth.endMs)).toBeLessThanOrEqual(100);
    // The truth itself is where the fixture says: after the 0.2 s padding, before the end's.
    expect(truth.startMs).toBeGreaterThanOrEqual(200);
    expect(truth.endMs).toBeLessThanOrEqual(pcm.length / 8 - 200);
  });

  it('reports one frame per 32 ms chunk with its time offsets, keeping a partial chunk for the next push', async () => {
    const stream = vad.createStream('offsets');
    expect(await pushAndCollect(stream, new Int16Array(200))).toEqual([]);
    const frames = await pushAndCollect(stream, new Int16Array(600));
    expect(frames.map((frame) => [frame.index, frame.startMs, frame.endMs])).toEqual([
      [0, 0, 32],
      [1, 32, 64],
      [2, 64, 96],
    ]);
    for (const frame of frames) expect(frame.runMs).toBeGreaterThan(0);
    stream.close();
  });

  it('gives the same probabilities however the audio is split into pushes', async () => {
    const pcm = loadSpeech8k('goodbye');
    const in20ms = await framesOf('split-a', pcm, 160);
    const inOddSizes = await framesOf('split-b', pcm, 337);
    const whole = await framesOf('split-c', pcm, pcm.length);
    expect(inOddSizes.map((frame) => frame.probability)).toEqual(in20ms.map((frame) => frame.probability));
    expect(whole.map((frame) => frame.probability)).toEqual(in20ms.map((frame) => frame.probability));
  });

  it('reset() forgets the speech history: the stream then answers like a fresh one', async () => {
    // Whole chunks only, so no leftover samples carry across the reset.
    const hours = loadSpeech8k('hours');
    const speech = hours.subarray(0, hours.length - (hours.length % 256));
    const stream = vad.createStream('reset');
    await pushAndCollect(stream, speech);
    stream.reset();
    const afterReset = await pushAndCollect(stream, speech);
    const fresh = await framesOf('reset-fresh', speech, speech.length);
    expect(afterReset.map((frame) => frame.probability)).toEqual(fresh.map((frame) => frame.probability));
    stream.close();
  });

  it('finds nothing in 5 s of digital silence', async () => {
    const frames = await framesOf('silence', silence(5000));
    expect(frames).toHaveLength(156);
    expect(Math.max(...frames.map((frame) => frame.probability))).toBeLessThan(0.5);
  });

  it('finds nothing in 5 s of -50 dBFS white noise (seeded)', async () => {
    const noise = whiteNoise(5000, -50, 20261122);
    expect(rmsDbfs(noise)).toBeCloseTo(-50, 0);
    const frames = await framesOf('noise', noise);
    expect(Math.max(...frames.map((frame) => frame.probability))).toBeLessThan(0.5);
  });

  it('keeps each call its own state: interleaved streams answer as they would alone', async () => {
    const a = concat(loadSpeech8k('transfer'), silence(300));
    const b = concat(silence(300), loadSpeech8k('interrupt'));
    const aloneA = await framesOf('alone-a', a);
    const aloneB = await framesOf('alone-b', b);
    const streamA = vad.createStream('mixed-a');
    const streamB = vad.createStream('mixed-b');
    const mixedA: VadFrame[] = [];
    const mixedB: VadFrame[] = [];
    const length = Math.min(a.length, b.length);
    for (let start = 0; start < length; start += 160) {
      const [framesA, framesB] = await Promise.all([pushAndCollect(streamA, a.subarray(start, start + 160)), pushAndCollect(streamB, b.subarray(start, start + 160))]);
      mixedA.push(...framesA);
      mixedB.push(...framesB);
    }
    expect(mixedA.map((frame) => frame.probability)).toEqual(aloneA.slice(0, mixedA.length).map((frame) => frame.probability));
    expect(mixedB.map((frame) => frame.probability)).toEqual(aloneB.slice(0, mixedB.length).map((frame) => frame.probability));
  });

  it('refuses audio that is not Int16 PCM, and pushes after close, with clear errors', async () => {
    const stream = vad.createStream('bad');
    expect(() => stream.push(new Float32Array(256) as unknown as Int16Array)).toThrow(expect.objectContaining({ code: 'bad_request', retryable: false }));
    expect(await pushAndCollect(stream, new Int16Array(256))).toHaveLength(1);
    stream.close();
    expect(() => stream.push(new Int16Array(256))).toThrow(EngineError);
    expect(() => stream.push(new Int16Array(256))).toThrow(/closed/);
  });

  it('delivers every frame in chunk order to each listener, and a failed chunk to onError while later chunks still run', async () => {
    let calls = 0;
    const model = {
      name: 'flaky',
      device: 'cpu' as const,
      inputNames: [],
      outputNames: [],
      run: () => {
        calls += 1;
        if (calls === 2) return Promise.reject(new Error('worker lost'));
        return Promise.resolve({ outputs: { output: { type: 'float32' as const, data: new Float32Array([calls / 10]), dims: [1, 1] }, stateN: { type: 'float32' as const, data: new Float32Array(256), dims: [2, 1, 128] } }, queueWaitMs: 0, runMs: 1 });
      },
    };
    const stream = new SileroVadStream('flaky', model, { type: 'int64', data: new BigInt64Array([8000n]), dims: [] });
    const first: number[] = [];
    const second: number[] = [];
    const errors: string[] = [];
    stream.listen({ onFrame: (frame) => first.push(frame.index), onError: (error) => errors.push((error as Error).message) });
    stream.listen({ onFrame: (frame) => second.push(frame.index) });
    for (let i = 0; i < 8; i++) stream.push(new Int16Array(160));
    await stream.drained();
    // 1280 samples: five chunks; the second failed, the others came in order to both listeners.
    expect(first).toEqual([0, 2, 3, 4]);
    expect(second).toEqual([0, 2, 3, 4]);
    expect(errors).toEqual(['worker lost']);
    stream.close();
  });
});
