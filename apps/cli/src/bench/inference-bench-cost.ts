/**
 * VAD cost per 32 ms chunk per stream at a given batch size, through the real runtime: B streams
 * each push one chunk at once (a full batch of B rows, sent without waiting out the gathering
 * delay), round after round, on one worker thread.
 *
 * Two figures: `wall`, the closed-loop wall time per stream-chunk (everything: the streams' work,
 * batch assembly, the hand-off to the worker and back, the ONNX run), and `run`, the worker's
 * ONNX run time per stream-chunk (the compute the batch costs). Rounds are timed in short windows;
 * on a shared machine the best window is the least disturbed one, the median is shown beside it.
 */
import { performance } from 'node:perf_hooks';
import { openStreams, pushRound, startVadRig, type BenchDevice } from './inference-bench-vad';
import { percentile } from './inference-bench-stats';

export interface BatchCost {
  batchRows: number;
  rounds: number;
  bestWallUs: number;
  medianWallUs: number;
  bestRunUs: number;
  medianRunUs: number;
}

const WARMUP_ROUNDS = 20;
const WINDOW_MS = 150;

export async function measureBatchCost(device: BenchDevice, batchRows: number, durationMs: number): Promise<BatchCost> {
  const rig = await startVadRig(device, batchRows);
  try {
    const streams = openStreams(rig.vad, batchRows);
    let chunk = 0;
    for (; chunk < WARMUP_ROUNDS; chunk++) await pushRound(streams, chunk);
    const wallUs: number[] = [];
    const runUs: number[] = [];
    let rounds = 0;
    const benchStartedAt = performance.now();
    while (performance.now() - benchStartedAt < durationMs) {
      rig.batches.length = 0;
      const windowStartedAt = performance.now();
      let windowRounds = 0;
      while (performance.now() - windowStartedAt < WINDOW_MS) {
        await pushRound(streams, chunk++);
        windowRounds++;
      }
      const streamChunks = windowRounds * batchRows;
      wallUs.push(((performance.now() - windowStartedAt) * 1000) / streamChunks);
      runUs.push((rig.batches.reduce((sum, batch) => sum + batch.runMs, 0) * 1000) / streamChunks);
      rounds += windowRounds;
    }
    for (const stream of streams) stream.close();
    return {
      batchRows,
      rounds,
      bestWallUs: Math.min(...wallUs),
      medianWallUs: percentile(wallUs, 0.5),
      bestRunUs: Math.min(...runUs),
      medianRunUs: percentile(runUs, 0.5),
    };
  } finally {
    await rig.runtime.close();
  }
}
