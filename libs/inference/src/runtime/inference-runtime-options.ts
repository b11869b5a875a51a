import { availableParallelism } from 'node:os';
import type { ComputeUsageSink, InferenceDevice } from '../contracts';
import { INFERENCE_DEVICES, type RequestedDevice } from './execution-provider';
import { MODEL_PRECISIONS, type ModelPrecision } from './model-precision';

/** What the runtime logs through: Nest's Logger fits, so does pino or `console`. */
export interface InferenceLogger {
  log(message: string): void;
  warn(message: string): void;
}

/** One batch as the scheduler ran it: for metrics and the benchmark. */
export interface BatchRecord {
  model: string;
  device: InferenceDevice;
  /** Requests and rows in the batch. */
  requests: number;
  rows: number;
  /** How long the batch's first request waited for others to join (the scheduler's added delay). */
  gatherMs: number;
  /**
   * Each request's wait before its batch ran: gathering plus waiting for a free worker (the
   * model's queue delay, which grows first when the device falls behind).
   */
  queueWaitsMs: readonly number[];
  runMs: number;
}

export interface InferenceRuntimeOptions {
  /**
   * 'auto' (default): CUDA, else WebGPU, else CPU, with one log line per provider passed over and
   * why. An explicit GPU provider that does not work here makes the runtime refuse to start.
   */
  device?: RequestedDevice;
  /**
   * Per-model providers (INFERENCE_MODEL_DEVICES), keyed as `pinFor` matches them. A pinned
   * provider that does not work here falls back to the runtime's, with one log line.
   */
  modelDevices?: Readonly<Record<string, InferenceDevice>>;
  /**
   * Per-model numeric variants (INFERENCE_MODEL_PRECISION), keyed as pins are: fp16 or int8 load the
   * model's `_fp16` / `_int8` (or `_quantized`) file where its provider runs it and the file is
   * there; otherwise the fp32 file, with one log line (see model-precision.ts).
   */
  modelPrecisions?: Readonly<Record<string, ModelPrecision>>;
  /** MODELS_DIR: lets a pin name a model by its folder there (its catalog name). */
  modelsDir?: string;
  /** Worker threads; default min(2, available cores). */
  workers?: number;
  /** onnxruntime intra-op threads per session, per worker; default 1 (workers x threads <= cores). */
  intraOpThreads?: number;
  /** onnxruntime inter-op threads; default 1 (sequential execution: the graphs are small). */
  interOpThreads?: number;
  logger?: InferenceLogger;
  usageSink?: ComputeUsageSink;
  /** Longest time a request waits for others to join its batch; default 2 ms. */
  batchMaxDelayMs?: number;
  /**
   * Work-conserving batching (default true): when a worker is idle, a new batch runs at the end of
   * the current tick instead of waiting `batchMaxDelayMs`. Waiting for company only pays while every
   * worker is busy (the batch could not start anyway); with a free worker it is pure latency, and the
   * VAD decision that ends a caller's turn sits on the reply's critical path.
   */
  dispatchWhenIdle?: boolean;
  onBatch?: (batch: BatchRecord) => void;
}

export interface ResolvedRuntimeOptions {
  device: RequestedDevice;
  modelDevices: Readonly<Record<string, InferenceDevice>>;
  modelPrecisions: Readonly<Record<string, ModelPrecision>>;
  modelsDir: string | undefined;
  workers: number;
  intraOpThreads: number;
  interOpThreads: number;
  batchMaxDelayMs: number;
  dispatchWhenIdle: boolean;
}

export function resolveRuntimeOptions(options: InferenceRuntimeOptions): ResolvedRuntimeOptions {
  const device = options.device ?? 'auto';
  if (device !== 'auto' && !INFERENCE_DEVICES.includes(device)) {
    throw new RangeError(`inference device must be 'auto', 'cuda', 'webgpu' or 'cpu', got ${JSON.stringify(device)}`);
  }
  const modelDevices = options.modelDevices ?? {};
  for (const [model, pinned] of Object.entries(modelDevices)) {
    if (!model || !INFERENCE_DEVICES.includes(pinned)) throw new RangeError(`model device pin ${JSON.stringify(model)}=${JSON.stringify(pinned)}: must be a model name = cpu, cuda or webgpu`);
  }
  const modelPrecisions = options.modelPrecisions ?? {};
  for (const [model, precision] of Object.entries(modelPrecisions)) {
    if (!model || !MODEL_PRECISIONS.includes(precision)) throw new RangeError(`model precision ${JSON.stringify(model)}=${JSON.stringify(precision)}: must be a model name = ${MODEL_PRECISIONS.join(', ')}`);
  }
  return {
    device,
    modelDevices,
    modelPrecisions,
    modelsDir: options.modelsDir,
    workers: positiveInteger('workers', options.workers ?? Math.min(2, availableParallelism())),
    intraOpThreads: positiveInteger('intraOpThreads', options.intraOpThreads ?? 1),
    interOpThreads: positiveInteger('interOpThreads', options.interOpThreads ?? 1),
    batchMaxDelayMs: nonNegative('batchMaxDelayMs', options.batchMaxDelayMs ?? 2),
    dispatchWhenIdle: options.dispatchWhenIdle ?? true,
  };
}

function positiveInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer, got ${value}`);
  return value;
}

function nonNegative(name: string, value: number): number {
  if (!Number.isFinite(value) || value < 0) throw new RangeError(`${name} must be a finite number >= 0, got ${value}`);
  return value;
}
