/**
 * `npm run bench:inference [-- --check] [-- --device cpu|cuda|webgpu]`
 *
 * The real Silero VAD (v5, 8 kHz) through the real inference runtime (worker thread, micro-batching
 * scheduler), on one worker thread with one ONNX thread:
 *  1. cost per 32 ms chunk per stream at batch 1, 8, 32, 128, and the ratio to batch 1
 *     (target: <= 0.3x at 32 streams);
 *  2. the scheduler's added delay (p50/p99) with streams pushing 20 ms frames on real timers;
 *  3. how many calls' VAD one core sustains in real time (target: >= 400), simulated, with the
 *     figure computed from the per-stream cost beside it.
 * Prints a table, then one `BENCH_JSON {...}` line. --check exits 1 when a target fails.
 * --device cuda (or webgpu) runs on that execution provider, and fails with the reason where there is none.
 */
import { cpus, loadavg } from 'node:os';
import { EngineError } from '@switchboard/inference';
import { findCapacity, type CapacityResult } from './inference-bench-capacity';
import { measureBatchCost, type BatchCost } from './inference-bench-cost';
import { measureSchedulerDelay, type SchedulerDelay } from './inference-bench-delay';
import { CHUNK_MS, type BenchDevice } from './inference-bench-vad';

const BATCH_SIZES = [1, 8, 32, 128];
const COST_DURATION_MS = 1800;
const DELAY_STREAMS = 64;
const DELAY_DURATION_MS = 3000;
const CAPACITY_BATCH_ROWS = 128;
const TARGET_RATIO_AT_32 = 0.3;
const TARGET_STREAMS_PER_CORE = 400;

interface Target {
  name: string;
  value: number;
  target: string;
  pass: boolean;
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const check = args.includes('--check');
  const device = parseDevice(args);
  const startedAt = Date.now();
  const loadBefore = loadavg()[0]!;
  console.log(`bench:inference on ${device.toUpperCase()}: ${cpus()[0]?.model ?? 'unknown CPU'} (${cpus().length} cores), Node ${process.version}, load average ${loadBefore.toFixed(2)}`);
  console.log(
    device === 'cpu'
      ? 'One worker thread, intraOpNumThreads=1: every figure is for one ONNX core (the caller thread runs on another).\n'
      : 'One worker thread feeding the GPU: "per core" figures are per worker thread driving it.\n',
  );

  const costs: BatchCost[] = [];
  for (const batchRows of BATCH_SIZES) costs.push(await measureBatchCost(device, batchRows, COST_DURATION_MS));
  const delay = await measureSchedulerDelay(device, DELAY_STREAMS, DELAY_DURATION_MS);
  const capacity = await findCapacity(device, CAPACITY_BATCH_ROWS);

  printCosts(costs);
  printDelay(delay);
  const computed = computedCapacity(costs);
  printCapacity(capacity, computed);

  const batch1 = costs.find((cost) => cost.batchRows === 1)!;
  const batch32 = costs.find((cost) => cost.batchRows === 32)!;
  const ratio32 = batch32.bestWallUs / batch1.bestWallUs;
  const targets: Target[] = [
    { name: 'per-stream cost at 32 streams vs batch 1', value: ratio32, target: `<= ${TARGET_RATIO_AT_32}x`, pass: ratio32 <= TARGET_RATIO_AT_32 },
    { name: 'concurrent calls per core (simulated)', value: capacity.streams, target: `>= ${TARGET_STREAMS_PER_CORE}`, pass: capacity.streams >= TARGET_STREAMS_PER_CORE },
  ];
  console.log('\nTargets:');
  for (const target of targets) console.log(`  ${target.pass ? 'PASS' : 'FAIL'}  ${target.name}: ${formatValue(target.value)} (target ${target.target})`);
  const elapsedMs = Date.now() - startedAt;
  const loadAfter = loadavg()[0]!;
  console.log(`\nBench took ${(elapsedMs / 1000).toFixed(1)} s; load average ${loadBefore.toFixed(2)} before, ${loadAfter.toFixed(2)} after (a shared machine inflates every figure).`);
  console.log(`BENCH_JSON ${JSON.stringify(benchJson(device, costs, delay, capacity, computed, targets, elapsedMs, [loadBefore, loadAfter]))}`);
  return check && targets.some((target) => !target.pass) ? 1 : 0;
}

function parseDevice(args: readonly string[]): BenchDevice {
  const index = args.indexOf('--device');
  if (index < 0) return 'cpu';
  const value = args[index + 1];
  if (value !== 'cpu' && value !== 'cuda' && value !== 'webgpu') throw new UsageError(`--device must be cpu, cuda or webgpu, got ${value ?? 'nothing'}`);
  return value;
}

/** Streams one core could serve from the per-stream cost at the cheapest batch size. */
function computedCapacity(costs: readonly BatchCost[]): { batchRows: number; fromWall: number; fromRun: number } {
  const best = costs.reduce((a, b) => (b.bestWallUs < a.bestWallUs ? b : a));
  return { batchRows: best.batchRows, fromWall: Math.floor((CHUNK_MS * 1000) / best.bestWallUs), fromRun: Math.floor((CHUNK_MS * 1000) / best.bestRunUs) };
}

function printCosts(costs: readonly BatchCost[]): void {
  const batch1 = costs.find((cost) => cost.batchRows === 1)!;
  console.log('VAD cost per 32 ms chunk per stream (Silero v5, 8 kHz, through workers + scheduler). Best window (median).');
  console.log('wall = closed-loop time per stream-chunk, all included; run = the worker\'s ONNX time per stream-chunk.');
  printTable(
    ['batch (streams)', 'wall us', 'vs batch 1', 'run us', 'vs batch 1', 'rounds'],
    costs.map((cost) => [
      String(cost.batchRows),
      `${cost.bestWallUs.toFixed(1)} (${cost.medianWallUs.toFixed(1)})`,
      `${(cost.bestWallUs / batch1.bestWallUs).toFixed(2)}x`,
      `${cost.bestRunUs.toFixed(1)} (${cost.medianRunUs.toFixed(1)})`,
      `${(cost.bestRunUs / batch1.bestRunUs).toFixed(2)}x`,
      String(cost.rounds),
    ]),
  );
}

function printDelay(delay: SchedulerDelay): void {
  console.log(`\nScheduler added delay: ${delay.streams} streams pushing 20 ms frames on real timers for ${delay.durationMs / 1000} s (batchMaxDelayMs 2).`);
  printTable(
    ['figure', 'p50 ms', 'p99 ms'],
    [
      ['gathering (first request in a batch -> sent to the worker)', delay.gatherP50Ms.toFixed(2), delay.gatherP99Ms.toFixed(2)],
      ['queue wait per chunk (gathering + worker queue + hand-offs)', delay.queueWaitP50Ms.toFixed(2), delay.queueWaitP99Ms.toFixed(2)],
    ],
  );
  console.log(`${delay.batches} batches, ${delay.meanBatchRows.toFixed(1)} rows on average.`);
}

function printCapacity(capacity: CapacityResult, computed: ReturnType<typeof computedCapacity>): void {
  console.log(`\nReal-time capacity of one core (simulated: N streams, a 32 ms chunk each per 32 ms tick; maxBatchRows ${capacity.maxBatchRows}).`);
  console.log('keeps up = median tick <= 32 ms in the least disturbed of 3 repetitions; the most disturbed one\'s median in brackets.');
  printTable(
    ['streams', 'median tick ms', 'p95 tick ms', 'worker busy', 'keeps up'],
    [...capacity.trials]
      .sort((a, b) => a.streams - b.streams)
      .map((trial) => [String(trial.streams), `${trial.medianTickMs.toFixed(1)} (${trial.worstMedianTickMs.toFixed(1)})`, trial.p95TickMs.toFixed(1), `${(trial.workerBusy * 100).toFixed(0)}%`, trial.keepsUp ? 'yes' : 'no']),
  );
  console.log(`Largest N that keeps up: ${capacity.streams} (simulated; the figure the target is checked on).`);
  console.log(`Computed from the per-stream cost at batch ${computed.batchRows}: ${computed.fromWall} streams (wall cost), ${computed.fromRun} (ONNX run cost alone).`);
}

function printTable(header: readonly string[], lines: readonly (readonly string[])[]): void {
  const widths = header.map((title, column) => Math.max(title.length, ...lines.map((line) => line[column]!.length)));
  const format = (cells: readonly string[]): string => cells.map((cell, column) => cell.padEnd(widths[column]!)).join('  ');
  console.log(format(header));
  console.log(widths.map((width) => '-'.repeat(width)).join('  '));
  for (const line of lines) console.log(format(line));
}

function formatValue(value: number): string {
  return Number.isInteger(value) ? String(value) : `${value.toFixed(3)}x`;
}

function benchJson(
  device: BenchDevice,
  costs: readonly BatchCost[],
  delay: SchedulerDelay,
  capacity: CapacityResult,
  computed: ReturnType<typeof computedCapacity>,
  targets: readonly Target[],
  elapsedMs: number,
  loadAverage: readonly number[],
): object {
  const batch1 = costs.find((cost) => cost.batchRows === 1)!;
  const round = (value: number, digits = 2): number => Number(value.toFixed(digits));
  return {
    bench: 'inference',
    device,
    node: process.version,
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    loadAverage: loadAverage.map((value) => round(value)),
    elapsedMs,
    vadCostPerStreamChunk: costs.map((cost) => ({
      batchRows: cost.batchRows,
      wallUsBest: round(cost.bestWallUs, 1),
      wallUsMedian: round(cost.medianWallUs, 1),
      wallVsBatch1: round(cost.bestWallUs / batch1.bestWallUs, 3),
      runUsBest: round(cost.bestRunUs, 1),
      runUsMedian: round(cost.medianRunUs, 1),
      runVsBatch1: round(cost.bestRunUs / batch1.bestRunUs, 3),
    })),
    schedulerDelay: {
      streams: delay.streams,
      gatherP50Ms: round(delay.gatherP50Ms),
      gatherP99Ms: round(delay.gatherP99Ms),
      queueWaitP50Ms: round(delay.queueWaitP50Ms),
      queueWaitP99Ms: round(delay.queueWaitP99Ms),
      meanBatchRows: round(delay.meanBatchRows, 1),
    },
    capacityPerCore: {
      simulatedStreams: capacity.streams,
      maxBatchRows: capacity.maxBatchRows,
      computedFromWall: computed.fromWall,
      computedFromRun: computed.fromRun,
      computedAtBatchRows: computed.batchRows,
      trials: capacity.trials.map((trial) => ({
        streams: trial.streams,
        medianTickMs: round(trial.medianTickMs),
        p95TickMs: round(trial.p95TickMs),
        worstMedianTickMs: round(trial.worstMedianTickMs),
        workerBusy: round(trial.workerBusy),
        keepsUp: trial.keepsUp,
      })),
    },
    targets: targets.map((target) => ({ name: target.name, value: round(target.value, 3), target: target.target, pass: target.pass })),
  };
}

class UsageError extends Error {}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof UsageError || (error instanceof EngineError && error.code === 'unavailable')) {
      console.error(`bench:inference: ${error.message}`);
      process.exit(1);
    }
    console.error(error);
    process.exit(2);
  },
);
