/**
 * onnxruntime-node hosting: a pool of worker threads, each holding one session per model, with
 * a micro-batching scheduler per model in front. The execution provider is chosen once, when the
 * runtime starts: CUDA where it really works ('auto' or 'cuda'), otherwise CPU.
 */
import { existsSync } from 'node:fs';
import { Logger } from '@nestjs/common';
import { EngineError, type InferenceDevice, type InferenceRuntime, type ModelLoadSpec } from '../contracts';
import { resolveRuntimeOptions, type InferenceLogger, type InferenceRuntimeOptions, type ResolvedRuntimeOptions } from './inference-runtime-options';
import { OnnxModelHandle, resolveBatchAxes } from './onnx-model-handle';
import { RUNTIME_ENGINE, WorkerPool } from './worker-pool';
import type { WorkerSessionSettings } from './worker-protocol';

export async function createInferenceRuntime(options: InferenceRuntimeOptions = {}): Promise<OnnxInferenceRuntime> {
  const resolved = resolveRuntimeOptions(options);
  const logger = options.logger ?? new Logger('InferenceRuntime');
  const pool = new WorkerPool(resolved.workers, logger);
  try {
    const device = await chooseDevice(resolved.device, pool, logger);
    const settings: WorkerSessionSettings = {
      executionProvider: device,
      intraOpNumThreads: resolved.intraOpThreads,
      interOpNumThreads: resolved.interOpThreads,
      executionMode: resolved.interOpThreads > 1 ? 'parallel' : 'sequential',
      graphOptimizationLevel: 'all',
    };
    logger.log(
      `Inference runtime: ${device.toUpperCase()} execution provider, ${resolved.workers} worker thread(s), intraOpNumThreads=${settings.intraOpNumThreads}, ` +
        `interOpNumThreads=${settings.interOpNumThreads}, executionMode=${settings.executionMode}, graphOptimizationLevel=${settings.graphOptimizationLevel}, ` +
        `batchMaxDelayMs=${resolved.batchMaxDelayMs}${resolved.dispatchWhenIdle ? ' (when all workers are busy)' : ''}`,
    );
    return new OnnxInferenceRuntime(device, pool, settings, resolved, options);
  } catch (error) {
    await pool.close();
    throw error;
  }
}

async function chooseDevice(requested: ResolvedRuntimeOptions['device'], pool: WorkerPool, logger: InferenceLogger): Promise<InferenceDevice> {
  if (requested === 'cpu') return 'cpu';
  const probe = await pool.probeCuda();
  if (probe.cudaAvailable) return 'cuda';
  if (requested === 'cuda') {
    throw new EngineError(RUNTIME_ENGINE, 'unavailable', `CUDA execution provider requested (device=cuda) but not available: ${probe.reason}`, false);
  }
  logger.warn(`CUDA execution provider not available (${probe.reason}): using CPU`);
  return 'cpu';
}

export class OnnxInferenceRuntime implements InferenceRuntime {
  private readonly models = new Map<string, { path: string; handle: Promise<OnnxModelHandle> }>();
  private closed = false;

  constructor(
    readonly device: InferenceDevice,
    private readonly pool: WorkerPool,
    private readonly settings: WorkerSessionSettings,
    private readonly resolved: ResolvedRuntimeOptions,
    private readonly options: InferenceRuntimeOptions,
  ) {}

  get workerCount(): number {
    return this.pool.workerCount;
  }

  /** Loads once per name: a second load of the same model returns the same handle. */
  loadModel(spec: ModelLoadSpec): Promise<OnnxModelHandle> {
    if (this.closed) return Promise.reject(new EngineError(RUNTIME_ENGINE, 'cancelled', 'inference runtime closed', false));
    const existing = this.models.get(spec.name);
    if (existing) {
      if (existing.path !== spec.path) {
        return Promise.reject(new EngineError(RUNTIME_ENGINE, 'bad_request', `model '${spec.name}' is already loaded from ${existing.path}, not ${spec.path}`, false));
      }
      return existing.handle;
    }
    const handle = this.load(spec);
    this.models.set(spec.name, { path: spec.path, handle });
    handle.catch(() => this.models.delete(spec.name));
    return handle;
  }

  /** Ends one worker as a crash would (see WorkerPool.terminateWorker). */
  terminateWorker(index: number): Promise<void> {
    return this.pool.terminateWorker(index);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.close();
  }

  private async load(spec: ModelLoadSpec): Promise<OnnxModelHandle> {
    const maxBatchRows = spec.maxBatchRows ?? 1;
    if (!spec.name) throw new EngineError(RUNTIME_ENGINE, 'bad_request', 'a model needs a name', false);
    if (!Number.isInteger(maxBatchRows) || maxBatchRows < 1) {
      throw new EngineError(RUNTIME_ENGINE, 'bad_request', `${spec.name}: maxBatchRows must be a positive integer, got ${maxBatchRows}`, false);
    }
    if (!existsSync(spec.path)) throw new EngineError(RUNTIME_ENGINE, 'model_missing', `${spec.name}: model file not found at ${spec.path}`, false);
    let metadata;
    try {
      metadata = await this.pool.load(spec.name, spec.path, this.settings);
    } catch (error) {
      if (error instanceof EngineError) throw error;
      const message = error instanceof Error ? error.message : String(error);
      throw new EngineError(RUNTIME_ENGINE, 'inference_failed', `${spec.name}: could not load ${spec.path}: ${message}`, false, { cause: error });
    }
    let axes;
    try {
      axes = resolveBatchAxes(spec, metadata);
    } catch (error) {
      throw new EngineError(RUNTIME_ENGINE, 'bad_request', error instanceof Error ? error.message : String(error), false);
    }
    return new OnnxModelHandle(spec.name, this.device, metadata, {
      model: spec.name,
      device: this.device,
      maxBatchRows,
      batchMaxDelayMs: this.resolved.batchMaxDelayMs,
      dispatchWhenIdle: this.resolved.dispatchWhenIdle,
      axes,
      inputNames: metadata.inputs.map((input) => input.name),
      pool: this.pool,
      usageSink: this.options.usageSink,
      onBatch: this.options.onBatch,
    });
  }
}
