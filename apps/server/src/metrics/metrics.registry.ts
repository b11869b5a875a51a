import { Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Registry } from 'prom-client';

/** prom-client's event-loop histogram samples at this resolution (ms); its default, 10, hides small stalls. */
const EVENT_LOOP_RESOLUTION_MS = 1;

/**
 * This process's metrics: prom-client's defaults (CPU, memory, GC, handles, and event-loop delay
 * p50/p90/p99 from perf_hooks.monitorEventLoopDelay, reset at each scrape). One registry per process.
 */
@Injectable()
export class MetricsRegistry {
  private readonly registry = new Registry();

  constructor() {
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: EVENT_LOOP_RESOLUTION_MS });
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }
}
