import { QueuedTtsStream, type TtsEngine, type TtsStream } from '@switchboard/inference';
import type { EngineDelayLog } from './engine-delay-log';
import { waitUntil } from './precise-wait';

export interface FakeTtsTiming {
  firstByteMs: number;
  sampleRate: number;
  audioMs: number;
  chunkMs: number;
  /** After the first chunk: this many chunks every `burstIntervalMs` (faster than real time, like a streaming server). */
  chunksPerBurst: number;
  burstIntervalMs: number;
}

/**
 * A voice with scripted timing, on the real remote-TTS stream plumbing (QueuedTtsStream): the
 * first chunk `firstByteMs` after synthesize(), the rest of a fixed clip after it. Every chunk is
 * a view of one shared clip (a quiet 220 Hz tone): nothing downstream writes into agent audio.
 */
export class FakeTtsEngine implements TtsEngine {
  readonly name = 'fake-tts';
  readonly sampleRate: number;
  private readonly chunks: Int16Array[];

  constructor(
    private readonly timing: FakeTtsTiming,
    private readonly log: EngineDelayLog,
  ) {
    this.sampleRate = timing.sampleRate;
    this.chunks = clipChunks(timing);
  }

  synthesize(text: string, options: { callId: string; signal?: AbortSignal }): TtsStream {
    const startedAt = performance.now();
    const { firstByteMs, chunksPerBurst, burstIntervalMs } = this.timing;
    return new QueuedTtsStream(
      this.sampleRate,
      this.name,
      async (sink) => {
        await waitUntil(startedAt + firstByteMs, sink.signal);
        if (sink.signal.aborted) return { timings: { totalMs: performance.now() - startedAt }, characters: 0, audioSeconds: 0 };
        const firstByteActualMs = performance.now() - startedAt;
        this.log.ttsFirstByte(options.callId, firstByteActualMs);
        sink.emit(this.chunks[0]!);
        let dueAt = performance.now();
        for (let next = 1; next < this.chunks.length; next += chunksPerBurst) {
          dueAt += burstIntervalMs;
          await waitUntil(dueAt, sink.signal);
          if (sink.signal.aborted) break;
          for (const chunk of this.chunks.slice(next, next + chunksPerBurst)) sink.emit(chunk);
        }
        return {
          timings: { firstResultMs: firstByteActualMs, totalMs: performance.now() - startedAt },
          characters: text.length,
          audioSeconds: this.timing.audioMs / 1000,
        };
      },
      options.signal,
    );
  }
}

function clipChunks(timing: FakeTtsTiming): Int16Array[] {
  const clip = new Int16Array(Math.round((timing.sampleRate * timing.audioMs) / 1000));
  // About -20 dBFS: audible, far from clipping through the resampler.
  for (let i = 0; i < clip.length; i++) clip[i] = Math.round(3000 * Math.sin((2 * Math.PI * 220 * i) / timing.sampleRate));
  const chunkSamples = Math.round((timing.sampleRate * timing.chunkMs) / 1000);
  const chunks: Int16Array[] = [];
  for (let start = 0; start < clip.length; start += chunkSamples) chunks.push(clip.subarray(start, start + chunkSamples));
  return chunks;
}
