import type { OnModuleDestroy } from '@nestjs/common';
import Redis from 'ioredis';
import type { PinoLogger } from 'nestjs-pino';
import type { RateLimitCounts, RateLimitStore } from './rate-limit-store';
import { ThrottledWarning } from './throttled-warning';

export interface RedisRateLimitStoreOptions {
  url: string;
  /** Namespaces the counters in a Redis shared with other data (or other test runs). */
  keyPrefix?: string;
  connectTimeoutMs?: number;
  commandTimeoutMs?: number;
}

export const DEFAULT_RATE_LIMIT_KEY_PREFIX = 'switchboard:rate-limit:';
// A rate limit check waits on Redis for at most this long: past it, the limiter fails open.
const DEFAULT_CONNECT_TIMEOUT_MS = 1_000;
const DEFAULT_COMMAND_TIMEOUT_MS = 500;
const DISCONNECT_TIMEOUT_MS = 500;
const ERROR_LOG_INTERVAL_MS = 30_000;

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
  private readonly connectionWarning: ThrottledWarning;

  constructor(options: RedisRateLimitStoreOptions, logger: Pick<PinoLogger, 'warn'>) {
    this.keyPrefix = options.keyPrefix ?? DEFAULT_RATE_LIMIT_KEY_PREFIX;
    this.connectionWarning = new ThrottledWarning(logger, ERROR_LOG_INTERVAL_MS);
    this.redis = new Redis(options.url, {
      lazyConnect: true,
      connectTimeout: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
      commandTimeout: options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
      maxRetriesPerRequest: 1,
      retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
      // ioredis arms this timer even for a socket that is already closed (Redis was down), and it
      // would hold up the process's exit for its default 2 s.
      disconnectTimeout: DISCONNECT_TIMEOUT_MS,
    });
    // Without a listener ioredis prints every failed reconnection to stderr.
    this.redis.on('error', (error) => this.connectionWarning.warn(error, 'Redis (rate limit counters) connection failed'));
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

  /** QUIT lets queued replies arrive; a connection that is not up is simply dropped. */
  async onModuleDestroy(): Promise<void> {
    if (this.redis.status !== 'ready') {
      this.redis.disconnect();
      return;
    }
    await this.redis.quit().catch(() => this.redis.disconnect());
  }

  /** The key in braces is a hash tag: both windows of a key land in one Redis Cluster slot, as MULTI needs. */
  private counterKey(key: string, windowStartMs: number): string {
    return `${this.keyPrefix}{${key}}:${windowStartMs}`;
  }
}
