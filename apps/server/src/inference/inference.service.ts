import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown, Optional } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@switchboard/config';
import {
  createInferenceRuntime,
  describeModelFeatures,
  type InferenceDevice,
  type ModelPrecision,
  ModelRegistry,
  type OnnxInferenceRuntime,
  type ProviderReport,
} from '@switchboard/inference';
import { PinoLogger } from 'nestjs-pino';
import { CallUsageRegistry } from '../billing/usage-meters/call-usage-registry';
import { InferenceMetrics } from '../metrics/inference-metrics';
import { InferenceCapacityService } from './capacity/inference-capacity.service';
import { resolveModelPins, resolveModelSettings } from './model-pins';

/** What /health/ready says of local inference. */
export type InferenceState =
  | { state: 'not_started' }
  | { state: 'starting'; requested: AppConfig['inference']['device'] }
  | ({ state: 'running' } & ProviderReport)
  | { state: 'failed'; requested: AppConfig['inference']['device']; error: string };

/**
 * The process's one inference runtime (onnxruntime sessions in worker threads) and its model
 * registry. With a pulled model in MODELS_DIR the runtime starts at bootstrap, so the start-up log
 * says which execution provider it chose and why the others failed; without one it starts on first
 * use (the built-in Silero VAD of the first call), so a server whose agents need only remote
 * engines spends no threads until a call comes.
 */
@Injectable()
export class InferenceService implements OnApplicationBootstrap, OnApplicationShutdown {
  readonly models: ModelRegistry;
  private runtimePromise: Promise<OnnxInferenceRuntime> | undefined;
  private started: OnnxInferenceRuntime | undefined;
  private startError: string | undefined;
  /** INFERENCE_MODEL_DEVICES with catalog aliases resolved (set at bootstrap). */
  private pins: Record<string, InferenceDevice> | undefined;
  /** INFERENCE_MODEL_PRECISION with catalog aliases resolved (set at bootstrap). */
  private precisions: Record<string, ModelPrecision> | undefined;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly logger: PinoLogger,
    private readonly usage: CallUsageRegistry,
    @Optional() private readonly metrics?: InferenceMetrics,
    /** Admission by capacity measures the batches' run time; absent where a test builds the service alone. */
    @Optional() private readonly capacity?: InferenceCapacityService,
  ) {
    this.logger.setContext(InferenceService.name);
    this.models = new ModelRegistry({ modelsDir: config.inference.modelsDir });
  }

  /** Says which model-backed features are on, which are off, and the command that turns each on. */
  async onApplicationBootstrap(): Promise<void> {
    let pulled = false;
    try {
      for (const line of await describeModelFeatures(this.models)) this.logger.info(line);
      const statuses = await this.models.status();
      // Built-ins (Silero, Flite) do not count: every server has them, remote-only ones too.
      pulled = statuses.some((status) => status.state === 'installed');
      const { pins, unknown } = resolveModelPins(this.config.inference.modelDevices, statuses);
      this.pins = pins;
      for (const key of unknown) {
        this.logger.warn(`INFERENCE_MODEL_DEVICES: '${key}' names no model here (see npm run models -- list), so it pins nothing`);
      }
      const precisions = resolveModelSettings(this.config.inference.modelPrecisions, statuses);
      this.precisions = precisions.settings;
      for (const key of precisions.unknown) {
        this.logger.warn(`INFERENCE_MODEL_PRECISION: '${key}' names no model here (see npm run models -- list), so it sets no precision`);
      }
    } catch (error) {
      this.logger.warn({ err: error }, 'could not read the models folder; model features are off');
    }
    if (pulled) await this.startAtBootstrap();
  }

  /**
   * Never throws: `auto` always ends on CPU, and an explicit INFERENCE_DEVICE=cuda|webgpu that is
   * unavailable here is logged as an error instead of stopping the server. Its remote engines and
   * API stay up, /health/ready says `inference.state: failed`, and every local model load fails
   * with the same clear error (the failed start is kept, not retried: a GPU does not appear later).
   */
  private async startAtBootstrap(): Promise<void> {
    try {
      await this.runtime();
    } catch (error) {
      this.logger.error(
        { err: error },
        `inference: the runtime could not start (INFERENCE_DEVICE=${this.config.inference.device}): local model features are off. ` +
          `Fix the GPU setup, or set INFERENCE_DEVICE=auto to fall back to CPU`,
      );
    }
  }

  runtime(): Promise<OnnxInferenceRuntime> {
    if (this.runtimePromise) return this.runtimePromise;
    this.runtimePromise = createInferenceRuntime({
      device: this.config.inference.device,
      modelDevices: this.pins ?? resolveModelPins(this.config.inference.modelDevices, []).pins,
      modelPrecisions: this.precisions ?? resolveModelSettings(this.config.inference.modelPrecisions, []).settings,
      modelsDir: this.config.inference.modelsDir,
      workers: this.config.inference.workers,
      batchMaxDelayMs: this.config.inference.batchMaxDelayMs,
      // Each batch's run time is charged to the calls in it, by rows (GPU/CPU seconds in the cost ledger).
      usageSink: this.usage,
      // Queue wait, run time and batch size per model (GET /metrics); run time per model for admission by capacity.
      onBatch: (batch) => {
        this.metrics?.batchRan(batch);
        this.capacity?.batchRan(batch.model, batch.runMs, batch.rows);
      },
      logger: { log: (message) => this.logger.info(message), warn: (message) => this.logger.warn(message) },
    });
    this.runtimePromise.then(
      (runtime) => {
        this.started = runtime;
        this.capacity?.runtimeStarted(runtime.workerCount);
      },
      (error: unknown) => (this.startError = error instanceof Error ? error.message : String(error)),
    );
    return this.runtimePromise;
  }

  /** The providers requested, chosen and passed over; undefined until the runtime has started. */
  providerReport(): ProviderReport | undefined {
    return this.started?.providerReport();
  }

  inferenceState(): InferenceState {
    const requested = this.config.inference.device;
    if (this.started) return { state: 'running', ...this.started.providerReport() };
    if (this.startError !== undefined) return { state: 'failed', requested, error: this.startError };
    return this.runtimePromise ? { state: 'starting', requested } : { state: 'not_started' };
  }

  async onApplicationShutdown(): Promise<void> {
    // A runtime that failed to start has no workers left to close (and its error was logged).
    const runtime = await this.runtimePromise?.catch(() => undefined);
    await runtime?.close();
  }
}
