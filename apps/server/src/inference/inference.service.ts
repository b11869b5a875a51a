import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown, Optional } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@switchboard/config';
import { createInferenceRuntime, type OnnxInferenceRuntime } from '@switchboard/inference/runtime';
import { describeModelFeatures, ModelRegistry } from '@switchboard/inference/models';
import { PinoLogger } from 'nestjs-pino';
import { CallUsageRegistry } from '../usage/call-usage-registry';
import { InferenceMetrics } from '../metrics/inference-metrics';

/**
 * The process's one inference runtime (onnxruntime sessions in worker threads) and its model
 * registry. The runtime starts on first use, so a server whose agents need no local model (echo,
 * remote engines) spends no threads on it; the model report is logged at every start.
 */
@Injectable()
export class InferenceService implements OnApplicationBootstrap, OnApplicationShutdown {
  readonly models: ModelRegistry;
  private runtimePromise: Promise<OnnxInferenceRuntime> | undefined;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly logger: PinoLogger,
    private readonly usage: CallUsageRegistry,
    @Optional() private readonly metrics?: InferenceMetrics,
  ) {
    this.logger.setContext(InferenceService.name);
    this.models = new ModelRegistry({ modelsDir: config.inference.modelsDir });
  }

  /** Says which model-backed features are on, which are off, and the command that turns each on. */
  async onApplicationBootstrap(): Promise<void> {
    try {
      for (const line of await describeModelFeatures(this.models)) this.logger.info(line);
    } catch (error) {
      this.logger.warn({ err: error }, 'could not read the models folder; model features are off');
    }
  }

  runtime(): Promise<OnnxInferenceRuntime> {
    this.runtimePromise ??= createInferenceRuntime({
      device: this.config.inference.device,
      workers: this.config.inference.workers,
      batchMaxDelayMs: this.config.inference.batchMaxDelayMs,
      // Each batch's run time is charged to the calls in it, by rows (GPU/CPU seconds in the cost ledger).
      usageSink: this.usage,
      // Queue wait, run time and batch size per model (GET /metrics).
      ...(this.metrics && { onBatch: this.metrics.batchRan }),
      logger: { log: (message) => this.logger.info(message), warn: (message) => this.logger.warn(message) },
    });
    return this.runtimePromise;
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.runtimePromise) await (await this.runtimePromise).close();
  }
}
