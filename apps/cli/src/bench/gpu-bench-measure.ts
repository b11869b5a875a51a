/**
 * One stage at one batch size through the real runtime: B lanes submit one request each in the same
 * tick (a "round"), round after round, closed loop, for about `seconds`. Figures:
 *  - p50/p95 of the round's wall time (what a caller waiting on that batch sees),
 *  - items/s (B x rounds / wall time),
 *  - compute per item: the workers' ONNX run time (BatchRecord.runMs) per row, which is what the
 *    item takes from the device's capacity (on CPU one worker = one core),
 *  - the real-time factor (compute seconds per second of audio) where the item is audio.
 */
import { performance } from 'node:perf_hooks';
import type { BatchRecord, OnnxInferenceRuntime, TensorData } from '@switchboard/inference';
import { percentile } from './inference-bench-stats';
import type { BenchStage } from './gpu-bench-stages';

export interface StageMeasurement {
  stage: BenchStage['id'];
  batch: number;
  mode: BenchStage['mode'];
  rounds: number;
  p50Ms: number;
  p95Ms: number;
  itemsPerS: number;
  computeMsPerItem: number;
  /** Rows per run the runtime actually formed (B for 'batched' when batching worked, 1 otherwise). */
  rowsPerRun: number;
  audioSecondsPerItem?: number;
  rtf?: number;
}

export interface SkippedMeasurement {
  stage: BenchStage['id'];
  batch: number;
  skipped: string;
}

/** Rounds measured at least, however long they take: fewer make no p95. */
const MIN_ROUNDS = 3;

export async function measureStage(
  runtime: OnnxInferenceRuntime,
  stage: BenchStage,
  batches: readonly number[],
  seconds: number,
  batchLog: BatchRecord[],
): Promise<Array<StageMeasurement | SkippedMeasurement>> {
  const results: Array<StageMeasurement | SkippedMeasurement> = [];
  // A batch whose rounds would take longer than this is skipped (on CPU a 16-row Whisper encode
  // takes tens of seconds): the whole bench is meant to finish in minutes.
  const maxRoundMs = Math.max(3000, 2 * seconds * 1000);
  let previous: StageMeasurement | undefined;
  for (const batch of batches) {
    const projectedMs = previous ? previous.p50Ms * (runsPerWorker(stage, batch, runtime.workerCount) / runsPerWorker(stage, previous.batch, runtime.workerCount)) : 0;
    if (projectedMs > maxRoundMs) {
      results.push({ stage: stage.id, batch, skipped: `projected ${(projectedMs / 1000).toFixed(1)} s per round > ${(maxRoundMs / 1000).toFixed(1)} s` });
      continue;
    }
    previous = await measureBatch(runtime, stage, batch, seconds, batchLog);
    results.push(previous);
  }
  return results;
}

/** How many runs' worth of work one worker does per round, for projecting the next batch's time. */
function runsPerWorker(stage: BenchStage, batch: number, workers: number): number {
  return stage.mode === 'batched' ? batch : Math.ceil(batch / workers);
}

async function measureBatch(runtime: OnnxInferenceRuntime, stage: BenchStage, batch: number, seconds: number, batchLog: BatchRecord[]): Promise<StageMeasurement> {
  // Batched stages get a handle per batch size (maxBatchRows is the handle's); each is its own session.
  const name = stage.mode === 'batched' ? `${stage.id}@${batch}` : stage.id;
  const maxBatchRows = stage.mode === 'batched' ? batch : 1;
  const handle = await runtime.loadModel({ name, path: stage.path, maxBatchRows, batchAxes: stage.batchAxes, batchingFor: stage.batchingFor?.(maxBatchRows) });
  const lanes = Array.from({ length: batch }, (_, index) => stage.lane(index));
  // Stateful lanes' unmeasured work (starting a sequence over) runs before the round's clock starts,
  // and its runs are taken out of the batch log so they do not count as the stage's compute.
  const prepare = async (): Promise<void> => {
    const mark = batchLog.length;
    await Promise.all(lanes.map(async (lane) => lane.prepare?.(handle)));
    batchLog.splice(mark);
  };
  const round = async (): Promise<Record<string, TensorData>> => {
    const outputs = await Promise.all(
      lanes.map(async (lane) => {
        if (lane.step) return lane.step(handle);
        const result = await handle.run(lane.feeds());
        lane.accept(result.outputs);
        return result.outputs;
      }),
    );
    return outputs[0]!;
  };

  // Warm-up: every worker's first run of a session is slow (allocation, kernel choice), and a
  // concurrent round of 1 reaches only one worker, so run at least as many rounds as workers.
  const warmupStartedAt = performance.now();
  for (let i = 0; i < runtime.workerCount || performance.now() - warmupStartedAt < seconds * 100; i++) {
    await prepare();
    await round();
  }

  const firstRecord = batchLog.length;
  const roundMs: number[] = [];
  let unmeasuredMs = 0;
  let lastOutputs: Record<string, TensorData> = {};
  const startedAt = performance.now();
  while (roundMs.length < MIN_ROUNDS || performance.now() - startedAt < seconds * 1000) {
    const prepareStartedAt = performance.now();
    await prepare();
    unmeasuredMs += performance.now() - prepareStartedAt;
    const roundStartedAt = performance.now();
    lastOutputs = await round();
    roundMs.push(performance.now() - roundStartedAt);
  }
  const elapsedMs = performance.now() - startedAt - unmeasuredMs;
  await Promise.all(lanes.map(async (lane) => lane.close?.()));
  const records = batchLog.slice(firstRecord).filter((record) => record.model === name);
  const rows = records.reduce((sum, record) => sum + record.rows, 0);
  const runMs = records.reduce((sum, record) => sum + record.runMs, 0);
  const computeMsPerItem = runMs / rows;
  const audioSecondsPerItem = stage.audioSeconds?.(lastOutputs);
  return {
    stage: stage.id,
    batch,
    mode: stage.mode,
    rounds: roundMs.length,
    p50Ms: percentile(roundMs, 0.5),
    p95Ms: percentile(roundMs, 0.95),
    itemsPerS: (batch * roundMs.length * 1000) / elapsedMs,
    computeMsPerItem,
    rowsPerRun: rows / records.length,
    ...(audioSecondsPerItem ? { audioSecondsPerItem, rtf: computeMsPerItem / 1000 / audioSecondsPerItem } : {}),
  };
}
