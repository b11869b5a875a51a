import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@switchboard/config';
import { CallUsageRegistry } from '../../billing/usage-meters/call-usage-registry';
import { ComputeCapacity, type CapacityDecision, type CapacitySnapshot } from './compute-capacity';

/** How often the live calls are sampled into the measurement window. */
const TICK_MS = 1_000;

/**
 * This instance's inference capacity (see ComputeCapacity): fed by the runtime's batches and the
 * calls metered here, asked by admission before a call is admitted. Per instance and per process:
 * each server process has its own inference workers, and a call's media stream is served by the
 * instance that admitted it unless a load balancer sends its socket elsewhere (then the reservation
 * lapses after 60 s and that instance's meter counts the call).
 */
@Injectable()
export class InferenceCapacityService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly capacity: ComputeCapacity;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly usage: CallUsageRegistry,
  ) {
    this.capacity = new ComputeCapacity({ maxUtilisation: config.inference.maxUtilisation });
    usage.onCallOpened(() => this.capacity.callStarted());
  }

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => this.capacity.tick(this.usage.openCalls), TICK_MS);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  /** The inference runtime started with this many worker threads. */
  runtimeStarted(workers: number): void {
    this.capacity.setWorkers(workers);
  }

  /** The runtime's onBatch: one batch's run time and rows, charged to the model. */
  batchRan(model: string, runMs: number, rows: number): void {
    this.capacity.batchRan(model, runMs, rows);
  }

  /** One more call here, or the snapshot that refuses it (reserved when admitted). */
  tryAdmit(): CapacityDecision {
    return this.capacity.tryAdmit();
  }

  snapshot(): CapacitySnapshot {
    return this.capacity.snapshot();
  }
}
