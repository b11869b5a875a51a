import { Injectable } from '@nestjs/common';
import { AggregatorRegistry, collectDefaultMetrics, Registry } from 'prom-client';
import { ClusterLink } from '../cluster/cluster-link';

/** prom-client's event-loop histogram samples at this resolution (ms); its default, 10, hides small stalls. */
const EVENT_LOOP_RESOLUTION_MS = 1;

/**
 * This process's metrics: prom-client's defaults (CPU, memory, GC, handles, and event-loop delay
 * p50/p90/p99 from perf_hooks.monitorEventLoopDelay, reset at each scrape). One registry per
 * process; in a cluster every series carries a `worker` label and a scrape, whichever worker it
 * lands on, returns every worker's series (gathered by the primary), so no process hides behind another.
 */
@Injectable()
export class MetricsRegistry {
  /** Every Switchboard series registers here (CallMetrics, LiveCallMetrics). */
  readonly registry = new Registry();

  constructor(private readonly cluster: ClusterLink) {
    if (cluster.inCluster) {
      this.registry.setDefaultLabels({ worker: String(cluster.workerId) });
      AggregatorRegistry.setRegistries([this.registry]);
      // Constructing one is what makes prom-client answer the primary's requests in a worker.
      new AggregatorRegistry();
    }
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: EVENT_LOOP_RESOLUTION_MS });
  }

  render(): Promise<string> {
    return this.cluster.inCluster ? this.cluster.clusterMetrics() : this.registry.metrics();
  }
}
