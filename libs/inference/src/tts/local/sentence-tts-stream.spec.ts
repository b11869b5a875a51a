import { EngineError } from '../../contracts';
import { SentenceTtsStream, type SentenceSynthesizer } from './sentence-tts-stream';

/** A synthesizer whose audio encodes which sentence it was for: sentence index + 1 as every sample. */
function countingSynthesizer(delayMs: number): { synthesize: SentenceSynthesizer; calls: string[] } {
  const calls: string[] = [];
  const synthesize: SentenceSynthesizer = async (sentence) => {
    calls.push(sentence);
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    return { samples: new Float32Array(100).fill(calls.length / 10), runMs: 1, queueWaitMs: 0.5 };
  };
  return { synthesize, calls };
}

async function collect(stream: AsyncIterable<Int16Array>): Promise<Int16Array[]> {
  const chunks: Int16Array[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

describe('SentenceTtsStream', () => {
  it('yields one PCM16 chunk per sentence, in order, and sums the timings', async () => {
    const { synthesize } = countingSynthesizer(5);
    const stream = new SentenceTtsStream('tts', 8000, 'A. B. C.', ['A.', 'B.', 'C.'], synthesize);
    const chunks = await collect(stream);
    expect(chunks.map((chunk) => chunk[0])).toEqual([3277, 6553, 9830]);
    const result = await stream.result;
    expect(result).toMatchObject({ characters: 8, audioSeconds: 300 / 8000 });
    expect(result.timings).toMatchObject({ runMs: 3, queueWaitMs: 1.5 });
    expect(result.timings.firstResultMs).toBeLessThanOrEqual(result.timings.totalMs);
  });

  it('clips out-of-range samples and turns NaN into silence', async () => {
    const stream = new SentenceTtsStream('tts', 8000, 'x', ['x'], async () => ({ samples: Float32Array.of(2, -2, NaN, 0.5), runMs: 0, queueWaitMs: 0 }));
    expect(Array.from((await collect(stream))[0]!)).toEqual([32767, -32767, 0, 16384]);
  });

  it('surfaces a failure to the iterator and to result as an EngineError of this engine', async () => {
    const stream = new SentenceTtsStream('kokoro', 8000, 'A. B.', ['A.', 'B.'], async (sentence) => {
      if (sentence === 'B.') throw new Error('boom');
      return { samples: new Float32Array(10), runMs: 0, queueWaitMs: 0 };
    });
    const chunks: Int16Array[] = [];
    await expect(
      (async () => {
        for await (const chunk of stream) chunks.push(chunk);
      })(),
    ).rejects.toMatchObject({ engine: 'kokoro', code: 'inference_failed' });
    expect(chunks).toHaveLength(1);
    await expect(stream.result).rejects.toBeInstanceOf(EngineError);
  });

  it('cancel() stops synthesis, ends the iterator quietly and rejects result as cancelled', async () => {
    const { synthesize, calls } = countingSynthesizer(20);
    const stream = new SentenceTtsStream('tts', 8000, 'A. B. C. D.', ['A.', 'B.', 'C.', 'D.'], synthesize);
    const chunks: Int16Array[] = [];
    for await (const chunk of stream) {
      chunks.push(chunk);
      stream.cancel();
    }
    expect(chunks).toHaveLength(1);
    await expect(stream.result).rejects.toMatchObject({ code: 'cancelled', retryable: false });
    expect(calls.length).toBeLessThanOrEqual(2);
  });

  it('an aborted signal cancels before any synthesis', async () => {
    const { synthesize, calls } = countingSynthesizer(1);
    const stream = new SentenceTtsStream('tts', 8000, 'A.', ['A.'], synthesize, AbortSignal.abort());
    expect(await collect(stream)).toEqual([]);
    await expect(stream.result).rejects.toMatchObject({ code: 'cancelled' });
    expect(calls).toEqual([]);
  });
});
