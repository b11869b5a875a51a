/**
 * Where the VAD's share of the overhead goes, measured on the calls themselves: how long each
 * call's VAD push took to give back its frames (the round trip through the runtime's batching
 * scheduler and worker thread), and each batch the runtime ran (how long its first request waited
 * for others, its run time, its rows). Diagnostics only: no target is checked on them.
 */
import type { BatchRecord } from '@switchboard/inference/runtime';
import type { VadFrame, VadStream } from '@switchboard/inference/vad';
import { distribution, type Distribution } from './latency-stats';

export interface VadTimingFigures {
  /** push() -> frames, for pushes that completed a 32 ms chunk. */
  pushToFrames: Distribution;
  batchGather: Distribution;
  batchRun: Distribution;
  batchRows: Distribution;
  batches: number;
}

export class VadTimings {
  private readonly pushMs: number[] = [];
  private readonly batches: BatchRecord[] = [];

  readonly onBatch = (batch: BatchRecord): void => {
    this.batches.push(batch);
  };

  /** The stream, timed: each push that yields frames records its round trip. */
  timed(stream: VadStream): VadStream {
    return {
      callId: stream.callId,
      sampleRate: stream.sampleRate,
      chunkSamples: stream.chunkSamples,
      push: async (pcm: Int16Array): Promise<VadFrame[]> => {
        const startedAt = performance.now();
        const frames = await stream.push(pcm);
        if (frames.length > 0) this.pushMs.push(performance.now() - startedAt);
        return frames;
      },
      reset: () => stream.reset(),
      close: () => stream.close(),
    };
  }

  /** Where the records stand now; pass to `since` to look at one run only. */
  mark(): { pushes: number; batches: number } {
    return { pushes: this.pushMs.length, batches: this.batches.length };
  }

  since(mark: { pushes: number; batches: number }): VadTimingFigures {
    const batches = this.batches.slice(mark.batches);
    return {
      pushToFrames: distribution(this.pushMs.slice(mark.pushes)),
      batchGather: distribution(batches.map((batch) => batch.gatherMs)),
      batchRun: distribution(batches.map((batch) => batch.runMs)),
      batchRows: distribution(batches.map((batch) => batch.rows)),
      batches: batches.length,
    };
  }
}
