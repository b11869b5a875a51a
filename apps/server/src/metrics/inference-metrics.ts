import { Injectable } from '@nestjs/common';
import type { BatchRecord } from '@switchboard/inference';
import { Histogram } from 'prom-client';
import { MetricsRegistry } from './metrics.registry';

/** A Silero chunk waits ~2 ms when all is well; tens of ms mean the device is falling behind. */
const WAIT_BUCKETS_S = [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1];
const RUN_BUCKETS_S = [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
const ROW_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128];

/**
 * The local models' micro-batching (VAD, turn, ASR, TTS, LLM in the inference workers) as
 * Prometheus series, labelled by model (the operator's installed models: a short, fixed list).
 * The queue wait is what scales first: it is each request's time from submission to its batch
 * running, so it rises as soon as the workers cannot keep up with the calls on this instance.
 */
@Injectable()
export class InferenceMetrics {
  private readonly queueWait: Histogram<'model'>;
  private readonly run: Histogram<'model'>;
  private readonly rows: Histogram<'model'>;

  constructor(metrics: MetricsRegistry) {
    const registers = [metrics.registry];
    this.queueWait = new Histogram({
      name: 'switchboard_inference_queue_wait_seconds',
      help: "Each inference request's wait before its batch ran (gathering plus waiting for a free worker), by model (the VAD's is silero-vad-v5).",
      labelNames: ['model'],
      buckets: WAIT_BUCKETS_S,
      registers,
    });
    this.run = new Histogram({
      name: 'switchboard_inference_batch_run_seconds',
      help: "One batch's run on the device, by model.",
      labelNames: ['model'],
      buckets: RUN_BUCKETS_S,
      registers,
    });
    this.rows = new Histogram({
      name: 'switchboard_inference_batch_rows',
      help: 'Rows (call streams) in one batch, by model: how much batching the load gives.',
      labelNames: ['model'],
      buckets: ROW_BUCKETS,
      registers,
    });
  }

  /** The inference runtime's onBatch hook. */
  readonly batchRan = (batch: BatchRecord): void => {
    const labels = { model: batch.model };
    for (const waitMs of batch.queueWaitsMs) this.queueWait.observe(labels, waitMs / 1000);
    this.run.observe(labels, batch.runMs / 1000);
    this.rows.observe(labels, batch.rows);
  };
}
