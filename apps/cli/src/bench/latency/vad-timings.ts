/**
 * Where the VAD's share of the overhead goes, measured on the calls themselves: how long each
 * call's VAD push took to give back its frames (the round trip through the runtime's batching
 * scheduler and worker thread), and each batch the runtime ran (how long its first request waited
 * for others, its run time, its rows). Diagnostics only: no target is checked on them.
 */
import type { BatchRecord, VadStream } from '@switchboard/inference';
import { distribution, type Distribution } from './latency-stats';

export interface VadTimingFigures {
  /** push() of the audio that completed a 32 ms chunk -> that chunk's frame. */
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

  /** The stream, timed: each chunk's frame records how long after the push that completed it it came. */
  timed(stream: VadStream): VadStream {
    let samplesPushed = 0;
    const completedAt = new Map<number, number>();
    stream.listen({
      onFrame: (frame) => {
        const at = completedAt.get(frame.index);
        if (at === undefined) return;
        completedAt.delete(frame.index);
        this.pushMs.push(performance.now() - at);
      },
    });
    return {
      callId: stream.callId,
      sampleRate: stream.sampleRate,
      chunkSamples: stream.chunkSamples,
      push: (pcm: Int16Array): void => {
        const now = performance.now();
        const before = Math.floor(samplesPushed / stream.chunkSamples);
        samplesPushed += pcm.length;
        for (let index = before; index < Math.floor(samplesPushed / stream.chunkSamples); index++) completedAt.set(index, now);
        stream.push(pcm);
      },
      listen: (listener) => stream.listen(listener),
      drained: () => stream.drained(),
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
