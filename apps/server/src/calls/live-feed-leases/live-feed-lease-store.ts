import type { FactoryProvider } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@switchboard/config';
import { LiveFeedLeaseRepository } from '@switchboard/persistence';
import { PinoLogger } from 'nestjs-pino';
import { RedisLiveFeedLeaseStore } from './redis-live-feed-lease-store';

/**
 * Where open live call feeds are counted: shared by every server process, so an organization's
 * cap holds across workers and instances. A feed holds a lease for `ttlMs`, renewed while it is
 * open and released when it ends; a process that dies leaves its leases to expire. Methods may
 * reject when the backend is unavailable.
 */
export interface LiveFeedLeaseStore {
  /** For logs: which backend this is. */
  readonly backend: 'postgres' | 'redis';
  /** Takes the lease unless the organization already holds `limit` unexpired ones; true when taken. */
  acquire(organizationId: string, leaseId: string, limit: number, ttlMs: number): Promise<boolean>;
  /** Extends the lease; false when it had already expired (the feed must end). */
  renew(organizationId: string, leaseId: string, ttlMs: number): Promise<boolean>;
  release(organizationId: string, leaseId: string): Promise<void>;
}

export const LIVE_FEED_LEASE_STORE = Symbol('LIVE_FEED_LEASE_STORE');

/** Leases as rows of `live_feed_leases` (the default: every deployment has the database). */
export class PostgresLiveFeedLeaseStore implements LiveFeedLeaseStore {
  readonly backend = 'postgres';

  constructor(private readonly leases: LiveFeedLeaseRepository) {}

  acquire(organizationId: string, leaseId: string, limit: number, ttlMs: number): Promise<boolean> {
    return this.leases.acquire(organizationId, leaseId, limit, ttlMs);
  }

  renew(organizationId: string, leaseId: string, ttlMs: number): Promise<boolean> {
    return this.leases.renew(organizationId, leaseId, ttlMs);
  }

  release(organizationId: string, leaseId: string): Promise<void> {
    return this.leases.release(organizationId, leaseId);
  }
}

/** Redis when REDIS_URL is set (as the rate limit's counters), else the database. */
export const liveFeedLeaseStoreProvider: FactoryProvider<LiveFeedLeaseStore> = {
  provide: LIVE_FEED_LEASE_STORE,
  inject: [APP_CONFIG, LiveFeedLeaseRepository, PinoLogger],
  useFactory: (config: AppConfig, leases: LiveFeedLeaseRepository, logger: PinoLogger): LiveFeedLeaseStore => {
    logger.setContext('LiveFeedLeaseStore');
    return config.redisUrl === undefined ? new PostgresLiveFeedLeaseStore(leases) : new RedisLiveFeedLeaseStore({ url: config.redisUrl }, logger);
  },
};
