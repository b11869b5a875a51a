import { monitorEventLoopDelay } from 'node:perf_hooks';
import { rmsDbfs } from '@switchboard/audio';
import { EngineError } from '../../contracts';
import type { TtsStream } from '../tts-engine';
import { FliteTts } from './flite-tts';

async function drain(stream: TtsStream): Promise<{ chunks: Int16Array[]; error?: EngineError }> {
  const chunks: Int16Array[] = [];
  try {
    for await (const chunk of stream) chunks.push(chunk);
  } catch (error) {
    if (!(error instanceof EngineError)) throw error;
    return { chunks, error };
  }
  return { chunks };
}

const seconds = (chunks: Int16Array[]) => chunks.reduce((sum, chunk) => sum + chunk.length, 0) / 16_000;

/** Real flite (WebAssembly in a worker thread); the first sentence also pays for starting the worker. */
describe('FliteTts (built-in voice)', () => {
  let tts: FliteTts;

  beforeAll(() => {
    tts = new FliteTts();
  });

  afterAll(async () => {
    await tts.close();
  });

  it('speaks sentence by sentence: one 16 kHz chunk per sentence, at speech level, with timings', async () => {
    const text = 'Thank you for calling. Our hours are nine to five, Monday to Friday. Goodbye!';
    const stream = tts.synthesize(text, { callId: 'call-1' });
    expect(stream.sampleRate).toBe(16_000);
    const { chunks, error } = await drain(stream);
    expect(error).toBeUndefined();
    expect(chunks).toHaveLength(3);
    for (const chunk of chunks) {
      // Speech, not silence or clipping noise: flite speaks at roughly -20 to -12 dBFS RMS.
      expect(rmsDbfs(chunk)).toBeGreaterThan(-30);
      expect(rmsDbfs(chunk)).toBeLessThan(-6);
    }
    // About 2.5 words per second: 15 words take several seconds, not a fraction or a minute.
    expect(seconds(chunks)).toBeGreaterThan(3);
    expect(seconds(chunks)).toBeLessThan(10);
    // The middle sentence has the most words, so it is the longest chunk.
    expect(chunks[1]!.length).toBeGreaterThan(chunks[0]!.length);
    expect(chunks[1]!.length).toBeGreaterThan(chunks[2]!.length);

    const result = await stream.result;
    expect(result.characters).toBe(text.length - 2); // the two spaces between sentences are not spoken
    expect(result.audioSeconds).toBeCloseTo(seconds(chunks), 6);
    expect(result.timings.runMs).toBeGreaterThan(0);
    expect(result.timings.firstResultMs).toBeLessThan(result.timings.totalMs);
  });

  it('keeps the event loop free while synthesizing (work runs in a worker thread)', async () => {
    const lag = monitorEventLoopDelay({ resolution: 5 });
    lag.enable();
    await drain(tts.synthesize('This sentence is synthesized while the event loop keeps ticking. And so is this one.', { callId: 'c' }));
    lag.disable();
    // One flite sentence is 60-80 ms of WebAssembly; on this thread it would show up here.
    expect(lag.max / 1e6).toBeLessThan(50);
  });

  it('has four voices that sound different, and refuses an unknown one', async () => {
    const rendered = new Map<string, Int16Array>();
    for (const voice of ['slt', 'rms', 'awb', 'kal']) {
      const { chunks, error } = await drain(tts.synthesize('Hello world.', { callId: 'c', voice }));
      expect(error).toBeUndefined();
      rendered.set(voice, chunks[0]!);
    }
    const lengths = new Set([...rendered.values()].map((samples) => samples.length));
    expect(lengths.size).toBe(4);
    expect((await drain(tts.synthesize('Hello.', { callId: 'c', voice: 'nova' }))).error).toMatchObject({ code: 'bad_request', retryable: false });
  });

  it('speaks slower with durationStretch', async () => {
    const slow = new FliteTts({ durationStretch: 1.5 });
    try {
      const normal = seconds((await drain(tts.synthesize('Please hold the line.', { callId: 'c' }))).chunks);
      const stretched = seconds((await drain(slow.synthesize('Please hold the line.', { callId: 'c' }))).chunks);
      expect(stretched / normal).toBeGreaterThan(1.3);
      expect(stretched / normal).toBeLessThan(1.7);
    } finally {
      await slow.close();
    }
  });

  it('cancel() stops at the next sentence: the loop ends and result rejects with cancelled', async () => {
    const stream = tts.synthesize('One. Two. Three. Four. Five. Six. Seven. Eight.', { callId: 'c' });
    const chunks: Int16Array[] = [];
    for await (const chunk of stream) {
      chunks.push(chunk);
      stream.cancel();
    }
    expect(chunks).toHaveLength(1);
    await expect(stream.result).rejects.toMatchObject({ code: 'cancelled' });
  });

  it('gives no audio and a zero result for text with nothing to say', async () => {
    const stream = tts.synthesize(' ... ', { callId: 'c' });
    expect((await drain(stream)).chunks).toEqual([]);
    await expect(stream.result).resolves.toMatchObject({ characters: 0, audioSeconds: 0 });
  });

  it('refuses bad options at construction', () => {
    expect(() => new FliteTts({ voice: 'nova' as never })).toThrow(/unknown voice "nova"/);
    expect(() => new FliteTts({ durationStretch: 0 })).toThrow(/durationStretch/);
    expect(() => new FliteTts({ workers: 0 })).toThrow(/workers/);
  });
});
