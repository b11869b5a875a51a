import { Injectable } from '@nestjs/common';
import { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../prisma.service';
import { invalidInput } from '../persistence.errors';

/** Largest number of expired counters one cleanup round deletes. */
export const RATE_LIMIT_CLEANUP_MAX_BATCH = 10_000;

/** What one counted hit tells the limiter. */
export interface RateLimitWindowCounts {
  /** Hits of the key in the current window, this one included. */
  currentHits: number;
  /** Hits of the key in the window just before (0 when it had none). */
  previousHits: number;
}

/**
 * The API rate limit's counters, shared by every server process: one row per key and fixed window
 * (windows are aligned multiples of their length, computed by the caller). A row outlives its
 * window by one more window, so it can still be read as "the previous window".
 */
@Injectable()
export class RateLimitCounterRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Counts one hit of `key` in the window starting at `windowStart` and reads the previous
   * window's count, in ONE statement outside any transaction: it is on every API request's path,
   * so it must take one round trip and hold the row lock only for the statement. ON CONFLICT
   * increments the latest committed row (not the statement's snapshot), so concurrent hits from
   * any number of processes each get their own, exact count.
   */
  async hit(key: string, windowStart: Date, windowMs: number): Promise<RateLimitWindowCounts> {
    if (key.length === 0) throw invalidInput('A rate limit key must not be empty');
    if (!Number.isInteger(windowMs) || windowMs < 1) throw invalidInput('windowMs must be a positive integer');
    const start = windowStart.getTime();
    if (!Number.isFinite(start)) throw invalidInput('windowStart must be a valid date');
    const current = new Date(start).toISOString();
    const previous = new Date(start - windowMs).toISOString();
    const expiresAt = new Date(start + 2 * windowMs).toISOString();
    const rows = await this.prisma.$queryRaw<Array<{ hits: number; previous_hits: number | null }>>(Prisma.sql`
      WITH counted AS (
        INSERT INTO rate_limit_counters (key, window_start, hits, expires_at)
        VALUES (${key}, ${current}::timestamptz, 1, ${expiresAt}::timestamptz)
        ON CONFLICT (key, window_start) DO UPDATE SET hits = rate_limit_counters.hits + 1
        RETURNING hits
      )
      SELECT counted.hits,
        (SELECT c.hits FROM rate_limit_counters c WHERE c.key = ${key} AND c.window_start = ${previous}::timestamptz) AS previous_hits
      FROM counted`);
    const row = rows[0];
    if (!row) throw new Error('rate_limit_counters upsert returned no row');
    return { currentHits: Number(row.hits), previousHits: Number(row.previous_hits ?? 0) };
  }

  /**
   * Deletes up to `limit` counters whose windows can no longer be read; returns how many. Bounded
   * so a backlog is worked off over several rounds instead of one long statement, and SKIP LOCKED
   * so replicas cleaning at the same moment pass over each other's rows instead of waiting.
   */
  async deleteExpired(limit = RATE_LIMIT_CLEANUP_MAX_BATCH): Promise<number> {
    if (!Number.isInteger(limit) || limit < 1 || limit > RATE_LIMIT_CLEANUP_MAX_BATCH) {
      throw invalidInput(`limit must be an integer from 1 to ${RATE_LIMIT_CLEANUP_MAX_BATCH}`);
    }
    return this.prisma.$executeRaw(Prisma.sql`
      DELETE FROM rate_limit_counters WHERE (key, window_start) IN (
        SELECT key, window_start FROM rate_limit_counters
        WHERE expires_at < now()
        LIMIT ${limit}
        FOR UPDATE SKIP LOCKED
      )`);
  }
}
