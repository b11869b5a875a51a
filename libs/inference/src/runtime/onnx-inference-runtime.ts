/**
 * onnxruntime-node hosting: a pool of worker threads, each holding one session per model, with
 * a micro-batching scheduler per model in front. The execution provider is chosen once, when the
 * runtime starts (see chooseProvider: `auto` tries CUDA, then WebGPU, then CPU); a model pinned
 * to another provider (INFERENCE_MODEL_DEVICES) gets it at load when it works here.
 */
import { existsSync } from 'node:fs';
import { Logger } from '@nestjs/common';
import { EngineError, type InferenceDevice, type InferenceRuntime, type ModelLoadSpec } from '../contracts';
import {
  chooseProvider,
  pinFor,
  settingFor,
  PROVIDER_LABELS,
  providerForModel,
  type GpuProvider,
  type ModelFallback,
  type ProviderFallback,
  type ProviderProbe,
  type ProviderProbeResult,
  type RequestedDevice,
} from './execution-provider';
import { resolveRuntimeOptions, type InferenceLogger, type InferenceRuntimeOptions, type ResolvedRuntimeOptions } from './inference-runtime-options';
import { choosePrecision, precisionFallbackLine, type ModelPrecision, type PrecisionFallback } from './model-precision';
import { OnnxModelHandle, resolveBatchAxes, resolveStepBatching } from './onnx-model-handle';
import { RUNTIME_ENGINE, WorkerPool, type TransferStats } from './worker-pool';
import type { WorkerSessionSettings } from './worker-protocol';

/** Which providers the runtime asked for, got and passed over, and where each loaded model runs. */
export interface ProviderReport {
  requested: RequestedDevice;
  device: InferenceDevice;
  fallbacks: ProviderFallback[];
  /** Loaded models by name: the provider each really runs on. */
  models: Record<string, InferenceDevice>;
  /** Pinned models that could not get their provider. */
  modelFallbacks: ModelFallback[];
  /** Loaded models by name: the numeric variant each runs (INFERENCE_MODEL_PRECISION). */
  precisions: Record<string, ModelPrecision>;
  /** Models whose requested variant could not be used, and why. */
  precisionFallbacks: PrecisionFallback[];
}

export async function createInferenceRuntime(options: InferenceRuntimeOptions = {}): Promise<OnnxInferenceRuntime> {
  let resolved = resolveRuntimeOptions(options);
  const logger = options.logger ?? new Logger('InferenceRuntime');
  const pool = new WorkerPool(resolved.workers, logger);
  try {
    const probe = cachedProbe(pool);
    const choice = await chooseProvider(resolved.device, probe, (line) => logger.warn(line));
    if (resolved.workers > 1 && (await usesWebGpu(choice.device, resolved.modelDevices, probe))) {
      // onnxruntime holds one WebGPU device per process: sessions run from two worker threads
      // interleave on its command encoder ("CommandEncoder is already finished", then a crash,
      // seen on an H200). One worker keeps WebGPU's runs in order; the GPU does the parallel work.
      logger.warn(`inference: WebGPU runs on 1 worker thread, not ${resolved.workers}: onnxruntime shares one WebGPU device per process, and runs from two threads corrupt its command encoder`);
      await pool.keepWorkers(1);
      resolved = { ...resolved, workers: 1 };
    }
    const settings: WorkerSessionSettings = {
      intraOpNumThreads: resolved.intraOpThreads,
      interOpNumThreads: resolved.interOpThreads,
      executionMode: resolved.interOpThreads > 1 ? 'parallel' : 'sequential',
      graphOptimizationLevel: 'all',
    };
    const pins = Object.entries(resolved.modelDevices).map(([model, provider]) => `${model}=${provider}`);
    const precisions = Object.entries(resolved.modelPrecisions).map(([model, precision]) => `${model}=${precision}`);
    logger.log(
      `Inference runtime: ${PROVIDER_LABELS[choice.device]} execution provider (requested ${resolved.device}), ${resolved.workers} worker thread(s), ` +
        `intraOpNumThreads=${settings.intraOpNumThreads}, interOpNumThreads=${settings.interOpNumThreads}, executionMode=${settings.executionMode}, ` +
        `graphOptimizationLevel=${settings.graphOptimizationLevel}, batchMaxDelayMs=${resolved.batchMaxDelayMs}${resolved.dispatchWhenIdle ? ' (when all workers are busy)' : ''}` +
        (pins.length > 0 ? `, model pins: ${pins.join(', ')}` : '') +
        (precisions.length > 0 ? `, model precisions: ${precisions.join(', ')}` : ''),
    );
    return new OnnxInferenceRuntime(choice.device, choice.fallbacks, probe, pool, settings, resolved, options, logger);
  } catch (error) {
    await pool.close();
    throw error;
  }
}

/** WebGPU is the runtime's provider, or a model is pinned to it and it is there. */
async function usesWebGpu(device: InferenceDevice, modelDevices: Readonly<Record<string, InferenceDevice>>, probe: ProviderProbe): Promise<boolean> {
  if (device === 'webgpu') return true;
  if (!Object.values(modelDevices).includes('webgpu')) return false;
  return (await probe('webgpu')).available;
}

/**
 * One probe per provider for the runtime's life (a pinned model may ask for one `auto` never
 * reached); a probe that failed to get an answer (a worker crash) is asked again next time.
 */
function cachedProbe(pool: WorkerPool): ProviderProbe {
  const results = new Map<GpuProvider, Promise<ProviderProbeResult>>();
  return (provider) => {
    let result = results.get(provider);
    if (!result) {
      result = pool.probe(provider);
      results.set(provider, result);
      result.catch(() => results.delete(provider));
    }
    return result;
  };
}

export class OnnxInferenceRuntime implements InferenceRuntime {
  private readonly models = new Map<string, { path: string; handle: Promise<OnnxModelHandle> }>();
  /** Models loaded so far and the provider each runs on. */
  private readonly modelDevices = new Map<string, InferenceDevice>();
  private readonly modelFallbacks: ModelFallback[] = [];
  private readonly modelPrecisions = new Map<string, ModelPrecision>();
  private readonly precisionFallbacks: PrecisionFallback[] = [];
  private closed = false;

  constructor(
    readonly device: InferenceDevice,
    private readonly fallbacks: readonly ProviderFallback[],
    private readonly probe: ProviderProbe,
    private readonly pool: WorkerPool,
    private readonly settings: WorkerSessionSettings,
    private readonly resolved: ResolvedRuntimeOptions,
    private readonly options: InferenceRuntimeOptions,
    private readonly logger: InferenceLogger,
  ) {}

  providerReport(): ProviderReport {
    return {
      requested: this.resolved.device,
      device: this.device,
      fallbacks: this.fallbacks.map((fallback) => ({ ...fallback })),
      models: Object.fromEntries(this.modelDevices),
      modelFallbacks: this.modelFallbacks.map((fallback) => ({ ...fallback })),
      precisions: Object.fromEntries(this.modelPrecisions),
      precisionFallbacks: this.precisionFallbacks.map((fallback) => ({ ...fallback })),
    };
  }

  get workerCount(): number {
    return this.pool.workerCount;
  }

  /** Tensor bytes posted to and received from the workers so far (worker-resident state saves these). */
  transferStats(): TransferStats {
    return this.pool.transferStats();
  }

  /** Sequences started and not yet closed (a leak shows here). */
  get openSequences(): number {
    return this.pool.openSequences;
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
    const device = await this.deviceFor(spec);
    const variant = this.variantFor(spec, device);
    let metadata;
    try {
      metadata = await this.pool.load(spec.name, variant.path, device, this.settings);
    } catch (error) {
      if (error instanceof EngineError) throw error;
      const message = error instanceof Error ? error.message : String(error);
      throw new EngineError(RUNTIME_ENGINE, 'inference_failed', `${spec.name}: could not load ${variant.path}: ${message}`, false, { cause: error });
    }
    let axes;
    let stepBatching;
    try {
      const signature = { inputs: metadata.inputs.map((input) => input.name), outputs: metadata.outputs.map((output) => output.name) };
      const batching = spec.batchingFor ? { ...spec, ...spec.batchingFor(signature) } : spec;
      axes = resolveBatchAxes(batching, metadata);
      stepBatching = resolveStepBatching(batching, axes, metadata);
    } catch (error) {
      throw new EngineError(RUNTIME_ENGINE, 'bad_request', error instanceof Error ? error.message : String(error), false);
    }
    this.modelDevices.set(spec.name, device);
    this.modelPrecisions.set(spec.name, variant.precision);
    return new OnnxModelHandle(spec.name, device, metadata, {
      model: spec.name,
      // Compute usage is charged at the provider the model really runs on.
      device,
      maxBatchRows,
      batchMaxDelayMs: this.resolved.batchMaxDelayMs,
      dispatchWhenIdle: this.resolved.dispatchWhenIdle,
      axes,
      inputNames: metadata.inputs.map((input) => input.name),
      pool: this.pool,
      usageSink: this.options.usageSink,
      onBatch: this.options.onBatch,
    }, stepBatching);
  }

  /** The model's file for its requested variant (INFERENCE_MODEL_PRECISION), or its fp32 file with a line saying why. */
  private variantFor(spec: ModelLoadSpec, device: InferenceDevice): { path: string; precision: ModelPrecision } {
    const requested = settingFor(spec, this.resolved.modelPrecisions, this.resolved.modelsDir)?.value;
    const choice = choosePrecision(spec.name, spec.path, requested, device, existsSync);
    // A load tried again after a failure must not list the model twice.
    const earlier = this.precisionFallbacks.findIndex((fallback) => fallback.model === spec.name);
    if (earlier >= 0) this.precisionFallbacks.splice(earlier, 1);
    if (choice.fallback) {
      this.logger.warn(precisionFallbackLine(choice.fallback, spec.path));
      this.precisionFallbacks.push(choice.fallback);
    }
    return choice;
  }

  /** The runtime's provider, or the model's pin when that provider works here. */
  private async deviceFor(spec: ModelLoadSpec): Promise<InferenceDevice> {
    const pin = pinFor(spec, this.resolved.modelDevices, this.resolved.modelsDir);
    if (!pin) return this.device;
    const choice = await providerForModel(spec.name, pin.provider, this.device, this.probe, (line) => this.logger.warn(line));
    if (choice.fallback) {
      // A load tried again after a failure must not list the model twice.
      const earlier = this.modelFallbacks.findIndex((fallback) => fallback.model === spec.name);
      if (earlier >= 0) this.modelFallbacks.splice(earlier, 1);
      this.modelFallbacks.push(choice.fallback);
    }
    return choice.device;
  }
}
