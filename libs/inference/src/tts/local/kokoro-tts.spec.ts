import { cp, mkdtemp, rm, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInferenceRuntime, type OnnxInferenceRuntime } from '../../runtime';
import { writeKokoroStandIn } from '@switchboard/testing';
import type { TtsStream } from '../tts-engine';
import { chunkAtSpaces, KokoroTts } from './kokoro-tts';
import { PlainCharacterPhonemizer } from './phonemizer';

jest.setTimeout(20_000);

async function collect(stream: TtsStream): Promise<Int16Array[]> {
  const chunks: Int16Array[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

const samplesIn = (chunks: Int16Array[]): number => chunks.reduce((sum, chunk) => sum + chunk.length, 0);

describe('KokoroTts on the stand-in Kokoro (real runtime)', () => {
  let dir: string;
  let runtime: OnnxInferenceRuntime;
  let kokoro: KokoroTts;
  const phonemizer = new PlainCharacterPhonemizer();

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kokoro-'));
    await writeKokoroStandIn(join(dir, 'kokoro'));
    runtime = await createInferenceRuntime({ device: 'cpu', workers: 1, logger: { log: () => undefined, warn: () => undefined } });
    kokoro = await KokoroTts.load({ runtime, modelDir: join(dir, 'kokoro'), phonemizer });
  });

  afterAll(async () => {
    await runtime.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('streams 24 kHz PCM16, one chunk per sentence, and reports timings', async () => {
    expect(kokoro.sampleRate).toBe(24000);
    expect(kokoro.defaultVoice).toBe('af_heart');
    const stream = kokoro.synthesize('Hello there. How can I help you today? Bye!', { callId: 'call-1' });
    expect(stream.sampleRate).toBe(24000);
    const chunks = await collect(stream);
    expect(chunks).toHaveLength(3);
    for (const chunk of chunks) {
      expect(chunk).toBeInstanceOf(Int16Array);
      expect(chunk.some((sample) => sample !== 0)).toBe(true);
    }
    // Longer sentences, more phonemes, more audio (the stand-in's samples per token is fixed).
    expect(chunks[1]!.length).toBeGreaterThan(chunks[0]!.length);
    const result = await stream.result;
    expect(result.characters).toBe(43);
    expect(result.audioSeconds).toBeCloseTo(samplesIn(chunks) / 24000, 9);
    expect(result.timings.runMs).toBeGreaterThan(0);
    expect(result.timings.firstResultMs).toBeGreaterThan(0);
  });

  it('is deterministic, and different voices give different audio', async () => {
    const text = 'Your order has shipped.';
    const [first] = await collect(kokoro.synthesize(text, { callId: 'c' }));
    const [again] = await collect(kokoro.synthesize(text, { callId: 'c' }));
    const [adam] = await collect(kokoro.synthesize(text, { callId: 'c', voice: 'am_adam' }));
    expect(again).toEqual(first);
    expect(adam!.length).toBe(first!.length);
    expect(adam).not.toEqual(first);
  });

  it('speed scales the length of the audio', async () => {
    const fast = await KokoroTts.load({ runtime, modelDir: join(dir, 'kokoro'), phonemizer, speed: 2, name: 'kokoro-fast' });
    const text = 'Thank you for calling.';
    const normal = samplesIn(await collect(kokoro.synthesize(text, { callId: 'c' })));
    const quick = samplesIn(await collect(fast.synthesize(text, { callId: 'c' })));
    expect(quick).toBe(Math.floor(normal / 2));
  });

  it('an unknown voice fails the stream with bad_request; a missing folder part fails load clearly', async () => {
    const stream = kokoro.synthesize('Hi.', { callId: 'c', voice: 'zz_nobody' });
    await expect(collect(stream)).rejects.toMatchObject({ code: 'bad_request', retryable: false });
    await expect(stream.result).rejects.toThrow(/unknown voice 'zz_nobody'/);

    const broken = join(dir, 'broken');
    await cp(join(dir, 'kokoro'), broken, { recursive: true });
    await unlink(join(broken, 'onnx', 'model.onnx'));
    await expect(KokoroTts.load({ runtime, modelDir: broken, phonemizer })).rejects.toMatchObject({ code: 'model_missing', retryable: false });
  });

  it('cancel() mid-stream stops after the current sentence', async () => {
    const stream = kokoro.synthesize('One. Two. Three. Four. Five.', { callId: 'c' });
    const chunks: Int16Array[] = [];
    for await (const chunk of stream) {
      chunks.push(chunk);
      stream.cancel();
    }
    expect(chunks).toHaveLength(1);
    await expect(stream.result).rejects.toMatchObject({ code: 'cancelled' });
  });

  it('splits phoneme runs longer than one model call at spaces', () => {
    const space = 16;
    const ids = [1, 2, space, 3, 4, space, 5, 6, 7];
    expect(chunkAtSpaces(ids, space, 4)).toEqual([[1, 2, space], [3, 4, space], [5, 6, 7]]);
    expect(chunkAtSpaces([1, 2, 3, 4, 5], space, 2)).toEqual([[1, 2], [3, 4], [5]]);
    expect(chunkAtSpaces([], space, 4)).toEqual([[]]);
  });
});
