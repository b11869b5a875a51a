import { Injectable, OnModuleDestroy } from '@nestjs/common';
import { PrismaService } from '@switchboard/persistence';
import { Counter, Gauge, Histogram } from 'prom-client';
import { MetricsRegistry } from './metrics.registry';

/** A free connection is lent in microseconds; waiting at all means the pool is busy, and the acquire timeout is 5 s. */
const ACQUIRE_BUCKETS_S = [0.0005, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/**
 * This process's Postgres pool as Prometheus series: connections open, idle and lent, requests
 * waiting for one, and how long each wait took (a pool that is too small for the calls on this
 * instance shows here before it shows as slow webhooks and late call records).
 */
@Injectable()
export class DatabaseMetrics implements OnModuleDestroy {
  private readonly stopObserving: () => void;

  constructor(metrics: MetricsRegistry, prisma: PrismaService) {
    const registers = [metrics.registry];
    const pool = prisma.pool;
    new Gauge({
      name: 'switchboard_db_pool_connections',
      help: 'Connections of this process\'s Postgres pool: state "open" (all), "idle", "waiting" (requests queued for a connection).',
      labelNames: ['state'],
      registers,
      collect() {
        this.set({ state: 'open' }, pool.totalCount);
        this.set({ state: 'idle' }, pool.idleCount);
        this.set({ state: 'waiting' }, pool.waitingCount);
      },
    });
    const acquire = new Histogram({
      name: 'switchboard_db_pool_acquire_seconds',
      help: 'Each wait for a pooled Postgres connection (queries and transactions).',
      buckets: ACQUIRE_BUCKETS_S,
      registers,
    });
    const failures = new Counter({
      name: 'switchboard_db_pool_acquire_failures_total',
      help: 'Waits for a pooled Postgres connection that ended without one (acquire timeout, or the database refused to connect).',
      registers,
    });
    this.stopObserving = prisma.observeConnectionAcquires((waitMs, acquired) => {
      acquire.observe(waitMs / 1000);
      if (!acquired) failures.inc();
    });
  }

  onModuleDestroy(): void {
    this.stopObserving();
  }
}
