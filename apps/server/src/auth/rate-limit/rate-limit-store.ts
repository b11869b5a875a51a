/** Hits of one key in the current fixed window (this one included) and in the window before. */
export interface RateLimitCounts {
  currentHits: number;
  previousHits: number;
}

/**
 * Where the API rate limit's counters live: shared by every server process, so a limit holds
 * across replicas. `hit` counts one request of `key` in the window starting at `windowStartMs`
 * (aligned, see sliding-window.ts) and returns both windows' counts; it may reject when the
 * backend is unavailable (the limiter then fails open).
 */
export interface RateLimitStore {
  /** For logs: which backend this is. */
  readonly backend: 'postgres' | 'redis';
  hit(key: string, windowStartMs: number, windowMs: number): Promise<RateLimitCounts>;
}

export const RATE_LIMIT_STORE = Symbol('RATE_LIMIT_STORE');
