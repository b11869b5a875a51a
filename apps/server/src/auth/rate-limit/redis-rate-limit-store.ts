import type { OnModuleDestroy } from '@nestjs/common';
import type Redis from 'ioredis';
import type { PinoLogger } from 'nestjs-pino';
import type { RateLimitCounts, RateLimitStore } from './rate-limit-store';
import { closeRedis, sharedStateRedis } from './redis-client';

export interface RedisRateLimitStoreOptions {
  url: string;
  /** Namespaces the counters in a Redis shared with other data (or other test runs). */
  keyPrefix?: string;
  connectTimeoutMs?: number;
  commandTimeoutMs?: number;
}

export const DEFAULT_RATE_LIMIT_KEY_PREFIX = 'switchboard:rate-limit:';

/**
 * Counters in Redis (when REDIS_URL is set): one MULTI per hit — INCR the current window's key,
 * PEXPIRE it to two windows (it is still read as "the previous window" during the next one), GET
 * the previous window's key. Expiry is Redis's job, so there is no cleanup. The client connects
 * on first use, gives up on a command quickly (commandTimeout, one retry) and keeps reconnecting
 * in the background; meanwhile `hit` rejects and the limiter fails open.
 */
export class RedisRateLimitStore implements RateLimitStore, OnModuleDestroy {
  readonly backend = 'redis';
  private readonly redis: Redis;
  private readonly keyPrefix: string;

  constructor(options: RedisRateLimitStoreOptions, logger: Pick<PinoLogger, 'warn'>) {
    this.keyPrefix = options.keyPrefix ?? DEFAULT_RATE_LIMIT_KEY_PREFIX;
    this.redis = sharedStateRedis(options, logger, 'rate limit counters');
  }

  async hit(key: string, windowStartMs: number, windowMs: number): Promise<RateLimitCounts> {
    const current = this.counterKey(key, windowStartMs);
    const results = await this.redis
      .multi()
      .incr(current)
      .pexpire(current, 2 * windowMs)
      .get(this.counterKey(key, windowStartMs - windowMs))
      .exec();
    if (!results) throw new Error('Redis aborted the rate limit transaction');
    for (const [error] of results) if (error) throw error;
    const [incremented, , previous] = results.map(([, value]) => value);
    return { currentHits: Number(incremented), previousHits: previous == null ? 0 : Number(previous) };
  }

  onModuleDestroy(): Promise<void> {
    return closeRedis(this.redis);
  }

  /** The key in braces is a hash tag: both windows of a key land in one Redis Cluster slot, as MULTI needs. */
  private counterKey(key: string, windowStartMs: number): string {
    return `${this.keyPrefix}{${key}}:${windowStartMs}`;
  }
}
