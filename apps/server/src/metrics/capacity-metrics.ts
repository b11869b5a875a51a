import { Injectable } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { InferenceCapacityService } from '../inference/capacity/inference-capacity.service';
import { MetricsRegistry } from './metrics.registry';

/**
 * Admission by inference capacity, read at each scrape: how busy this process's inference workers
 * were, how many more calls admission would take, and the measured cost per call of each local
 * model (labels: the operator's installed models, a short fixed list). Refusals for capacity are in
 * switchboard_call_admissions_total{outcome="capacity"}.
 */
@Injectable()
export class CapacityMetrics {
  constructor(metrics: MetricsRegistry, capacity: InferenceCapacityService) {
    const registers = [metrics.registry];
    new Gauge({
      name: 'switchboard_inference_utilisation',
      help: "Share of the inference workers' time their batches took over the last 30 s (1 = every worker busy all the time).",
      registers,
      collect() {
        this.set(capacity.snapshot().utilisation);
      },
    });
    new Gauge({
      name: 'switchboard_inference_max_utilisation',
      help: 'INFERENCE_MAX_UTILISATION: the share of the workers admission plans to fill before it refuses calls (reason capacity).',
      registers,
      collect() {
        this.set(capacity.snapshot().maxUtilisation);
      },
    });
    new Gauge({
      name: 'switchboard_inference_headroom_calls',
      help: 'More calls this process would admit now at the measured cost per call; -1 while no cost is measured yet (every call is admitted), or while only streaming models (the VAD) run and their load is under the share.',
      registers,
      collect() {
        this.set(capacity.snapshot().callsHeadroom ?? -1);
      },
    });
    new Gauge({
      name: 'switchboard_inference_cost_per_call_second',
      help: 'Measured worker-seconds each second of a call costs over the last 30 s, by model (batching and the agents\' mix included).',
      labelNames: ['model'],
      registers,
      collect() {
        this.reset();
        for (const [model, cost] of Object.entries(capacity.snapshot().costPerCallSecond)) this.set({ model }, cost);
      },
    });
  }
}
