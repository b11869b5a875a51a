/**
 * `npm run bench:gpu -- [--device auto|cpu|cuda|webgpu] [--models vad,smart-turn,whisper,kokoro,piper,llm]
 *                        [--batches 1,4,16] [--budget-ms 500] [--seconds N] [--models-dir DIR]`
 *
 * Per-model inference cost at realistic size through the real runtime (worker threads, micro-
 * batching), and from it how many pipeline-agent calls one device carries (gpu-bench-capacity.ts).
 * The real Silero VAD weights; realistic stand-ins (real signatures, real compute shapes) for the
 * rest, built into --models-dir when missing.
 * Prints a table, the capacity lines, then one `BENCH_JSON {...}` line.
 * Exit codes: 0 ok, 2 bad command line, 1 failure (e.g. the requested device is unavailable).
 */
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import {
  type BatchRecord,
  createInferenceRuntime,
  type InferenceRuntimeOptions,
  type OnnxInferenceRuntime,
  SILERO_MODEL_NAME,
} from '@switchboard/inference';
import { relative, sep } from 'node:path';
import { buildStandInModels, standInModelPaths } from '@switchboard/testing';
import { GPU_BENCH_USAGE, parseGpuBenchArgs, UsageError, type GpuBenchArgs, type GpuBenchModel } from './gpu-bench-args';
import { DEFAULT_CALL_MODEL, type CallModel } from './gpu-bench-capacity';
import { measureStage } from './gpu-bench-measure';
import { benchJson, capacities, printCapacity, printMeasurements, type Measurement } from './gpu-bench-report';
import { benchStages, missingStandIns, type BenchStage } from './gpu-bench-stages';

/** One intra-op thread per worker: on CPU the device is then exactly `workers` cores. */
const INTRA_OP_THREADS = 1;

async function main(argv: readonly string[]): Promise<number> {
  let args: GpuBenchArgs | 'help';
  try {
    args = parseGpuBenchArgs(argv);
  } catch (error) {
    console.error(`bench:gpu: ${error instanceof Error ? error.message : String(error)}\n${GPU_BENCH_USAGE}`);
    return 2;
  }
  if (args === 'help') {
    console.log(GPU_BENCH_USAGE);
    return 0;
  }
  const startedAt = performance.now();
  const loadBefore = loadavg()[0]!;
  const runtimeLog: string[] = [];
  const batchLog: BatchRecord[] = [];
  const openRuntime = (): Promise<OnnxInferenceRuntime> =>
    createInferenceRuntime({
      device: args.device as InferenceRuntimeOptions['device'],
      intraOpThreads: INTRA_OP_THREADS,
      interOpThreads: 1,
      ...(args.workers === undefined ? {} : { workers: args.workers }),
      logger: { log: (line) => void runtimeLog.push(line), warn: (line) => void runtimeLog.push(`warning: ${line}`) },
      onBatch: (record) => void batchLog.push(record),
      // Every model asks for the benchmarked variant, named by its folder under --models-dir.
      modelsDir: args.modelsDir,
      modelPrecisions: args.precision === 'fp32' ? {} : precisionForEveryModel(args.modelsDir, args.precision),
    });

  // Open a runtime first, so an unavailable device fails before minutes of model building.
  let runtime: OnnxInferenceRuntime;
  try {
    runtime = await openRuntime();
  } catch (error) {
    console.error(`bench:gpu: device '${args.device}' unavailable: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
  const device = runtime.device;
  const workers = runtime.workerCount;
  await runtime.close();
  console.log(`bench:gpu: requested --device ${args.device}, runtime chose ${device.toUpperCase()}; ${cpus()[0]?.model ?? 'unknown CPU'} (${cpus().length} cores), Node ${process.version}, load average ${loadBefore.toFixed(2)}`);
  for (const line of runtimeLog) console.log(`  runtime: ${line}`);
  console.log(`  ${workers} worker thread(s), intraOpNumThreads=${INTRA_OP_THREADS}; batches ${args.batches.join(', ')}; about ${args.seconds} s per measurement; precision ${args.precision}.`);

  const stages = benchStages(args.models, args.modelsDir);
  const standInBuildMs = await ensureStandIns(stages, args.modelsDir, args.precision === 'int8');
  const loadedBefore = runtimeLog.length;

  const measurements: Measurement[] = [];
  const precisions: Record<string, string> = {};
  for (const group of groupByModel(stages)) {
    // A runtime per model family: every worker holds a session per loaded model, and closing the
    // runtime frees them before the next family loads (the Whisper decoder alone is 315 MB).
    const groupRuntime = await openRuntime();
    try {
      for (const stage of group) {
        process.stderr.write(`  measuring ${stage.id}...\n`);
        measurements.push(...(await measureStage(groupRuntime, stage, args.batches, args.seconds, batchLog)));
        batchLog.length = 0;
      }
      Object.assign(precisions, groupRuntime.providerReport().precisions);
    } finally {
      await groupRuntime.close();
    }
  }

  // Variants that could not be used (no int8 stand-in for that model; fp16 on CPU), one line each.
  for (const line of runtimeLog.slice(loadedBefore)) if (line.includes('(INFERENCE_MODEL_PRECISION)')) console.log(`  runtime: ${line}`);
  console.log('');
  printMeasurements(measurements, stages);
  const callModel: CallModel = { ...DEFAULT_CALL_MODEL, budgetMs: args.budgetMs, computeUnits: device === 'cpu' ? workers * INTRA_OP_THREADS : 1 };
  const unitsNote = device === 'cpu' ? `CPU, ${callModel.computeUnits} worker thread(s) x ${INTRA_OP_THREADS} intra-op thread = ${callModel.computeUnits} core(s)` : `${device.toUpperCase()}, counted as 1 (runs from ${workers} workers may overlap on it)`;
  const results = capacities(measurements, callModel);
  printCapacity(results, callModel, unitsNote, args.models.includes('llm'));

  const elapsedMs = Math.round(performance.now() - startedAt);
  const loadAfter = loadavg()[0]!;
  console.log(`\nBench took ${(elapsedMs / 1000).toFixed(1)} s; load average ${loadBefore.toFixed(2)} before, ${loadAfter.toFixed(2)} after (a shared machine inflates every figure).`);
  const context = {
    requestedDevice: args.device,
    device,
    workers,
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    node: process.version,
    seconds: args.seconds,
    batches: args.batches,
    precision: args.precision,
    precisions,
    standInBuildMs,
    elapsedMs,
    loadAverage: [loadBefore, loadAfter],
  };
  console.log(`BENCH_JSON ${JSON.stringify(benchJson(context, measurements, results, callModel))}`);
  return 0;
}

/** Builds the realistic stand-ins the stages need when their files are missing; the build's ms, or null. */
async function ensureStandIns(stages: readonly BenchStage[], modelsDir: string, int8: boolean): Promise<number | null> {
  const missing = missingStandIns(stages, int8);
  if (missing.length === 0) {
    console.log(`  Realistic stand-ins found in ${modelsDir}.`);
    return null;
  }
  const started = performance.now();
  await buildStandInModels(modelsDir, { size: 'realistic', models: missing, int8 });
  const ms = Math.round(performance.now() - started);
  console.log(`  Built realistic stand-ins (${missing.join(', ')}) into ${modelsDir} in ${(ms / 1000).toFixed(1)} s.`);
  return ms;
}

function precisionForEveryModel(modelsDir: string, precision: 'fp16' | 'int8'): Record<string, 'fp16' | 'int8'> {
  const folders = Object.values(standInModelPaths(modelsDir)).map((path) => relative(modelsDir, path).split(sep)[0]!);
  return Object.fromEntries([...folders, SILERO_MODEL_NAME].map((folder) => [folder, precision]));
}

function groupByModel(stages: readonly BenchStage[]): BenchStage[][] {
  const groups = new Map<GpuBenchModel, BenchStage[]>();
  for (const stage of stages) groups.set(stage.model, [...(groups.get(stage.model) ?? []), stage]);
  return [...groups.values()];
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`bench:gpu failed: ${error instanceof UsageError ? error.message : error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(1);
  },
);
