import type { OnModuleDestroy } from '@nestjs/common';
import type Redis from 'ioredis';
import type { PinoLogger } from 'nestjs-pino';
import { closeRedis, sharedStateRedis } from '../../auth/rate-limit/redis-client';
import type { LiveFeedLeaseStore } from './live-feed-lease-store';

export interface RedisLiveFeedLeaseStoreOptions {
  url: string;
  /** Namespaces the leases in a Redis shared with other data (or other test runs). */
  keyPrefix?: string;
  connectTimeoutMs?: number;
  commandTimeoutMs?: number;
}

export const DEFAULT_LIVE_FEED_KEY_PREFIX = 'switchboard:live-feeds:';

// Each script reads Redis's own clock (TIME), so instances with drifting clocks agree on expiry.
// KEYS[1]: the organization's sorted set (member: lease id, score: expiry in ms).
const NOW_MS = `local t = redis.call('TIME') local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;
// ARGV: lease id, limit, ttl ms. Drops expired leases, counts, adds when under the limit.
const ACQUIRE = `${NOW_MS}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]))
return 1`;
// ARGV: lease id, ttl ms. Extends only a lease that has not expired.
const RENEW = `${NOW_MS}
local expires = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not expires or tonumber(expires) <= now then redis.call('ZREM', KEYS[1], ARGV[1]) return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2])) end
return 1`;

/**
 * Leases in Redis (when REDIS_URL is set): one sorted set per organization, changed only by
 * scripts, which Redis runs one at a time, so two processes cannot both take the last slot. The
 * set expires with its newest lease, so an organization whose processes died leaves nothing behind.
 */
export class RedisLiveFeedLeaseStore implements LiveFeedLeaseStore, OnModuleDestroy {
  readonly backend = 'redis';
  private readonly redis: Redis;
  private readonly keyPrefix: string;

  constructor(options: RedisLiveFeedLeaseStoreOptions, logger: Pick<PinoLogger, 'warn'>) {
    this.keyPrefix = options.keyPrefix ?? DEFAULT_LIVE_FEED_KEY_PREFIX;
    this.redis = sharedStateRedis(options, logger, 'live feed leases');
  }

  async acquire(organizationId: string, leaseId: string, limit: number, ttlMs: number): Promise<boolean> {
    return Number(await this.redis.eval(ACQUIRE, 1, this.key(organizationId), leaseId, limit, ttlMs)) === 1;
  }

  async renew(organizationId: string, leaseId: string, ttlMs: number): Promise<boolean> {
    return Number(await this.redis.eval(RENEW, 1, this.key(organizationId), leaseId, ttlMs)) === 1;
  }

  async release(organizationId: string, leaseId: string): Promise<void> {
    await this.redis.zrem(this.key(organizationId), leaseId);
  }

  onModuleDestroy(): Promise<void> {
    return closeRedis(this.redis);
  }

  private key(organizationId: string): string {
    return `${this.keyPrefix}{${organizationId}}`;
  }
}
