import type { OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { RATE_LIMIT_CLEANUP_MAX_BATCH, type RateLimitCounterRepository } from '@switchboard/persistence';
import type { PinoLogger } from 'nestjs-pino';
import type { RateLimitCounts, RateLimitStore } from './rate-limit-store';

/** How often expired counters are deleted. */
export const RATE_LIMIT_CLEANUP_INTERVAL_MS = 60_000;
/** Batches one cleanup round may delete back to back while they come back full. */
const CLEANUP_MAX_BATCHES_PER_ROUND = 10;

/**
 * Counters in the `rate_limit_counters` table (the default: every deployment has the database).
 * Expired rows are deleted by a timer in the background, never on a request's path; every replica
 * runs it, which is harmless (the delete skips rows another replica holds).
 */
export class PostgresRateLimitStore implements RateLimitStore, OnModuleInit, OnModuleDestroy {
  readonly backend = 'postgres';
  private timer: NodeJS.Timeout | undefined;
  private cleaning: Promise<unknown> | undefined;

  constructor(
    private readonly counters: RateLimitCounterRepository,
    private readonly logger: Pick<PinoLogger, 'warn'>,
    private readonly cleanupIntervalMs = RATE_LIMIT_CLEANUP_INTERVAL_MS,
  ) {}

  hit(key: string, windowStartMs: number, windowMs: number): Promise<RateLimitCounts> {
    return this.counters.hit(key, new Date(windowStartMs), windowMs);
  }

  onModuleInit(): void {
    this.timer = setInterval(() => {
      this.cleaning ??= this.cleanUp().finally(() => (this.cleaning = undefined));
    }, this.cleanupIntervalMs);
    // Housekeeping must never keep the process alive on its own.
    this.timer.unref();
  }

  /** Stops the timer and lets a running round finish, so it does not race the pool's shutdown. */
  async onModuleDestroy(): Promise<void> {
    clearInterval(this.timer);
    await this.cleaning;
  }

  /** One round; a failure is logged and the next round tries again. */
  async cleanUp(): Promise<number> {
    let total = 0;
    try {
      for (let batch = 0; batch < CLEANUP_MAX_BATCHES_PER_ROUND; batch += 1) {
        const deleted = await this.counters.deleteExpired(RATE_LIMIT_CLEANUP_MAX_BATCH);
        total += deleted;
        if (deleted < RATE_LIMIT_CLEANUP_MAX_BATCH) break;
      }
    } catch (error) {
      this.logger.warn({ err: error }, 'Deleting expired rate limit counters failed; the next round retries');
    }
    return total;
  }
}
