/**
 * The sliding-window-counter approximation (as Cloudflare describes it): counters are kept per
 * fixed window, and a request is judged by
 *
 *   estimated = previousHits * (1 - elapsedFraction) + currentHits
 *
 * i.e. as if the previous window's hits were spread evenly over it. Two counters per key instead
 * of a timestamp per hit, so it fits one upsert (Postgres) or one MULTI (Redis), and a burst at a
 * window's end cannot double the budget the way plain fixed windows allow.
 */

export interface SlidingWindowInput {
  /** Requests allowed per window. */
  limit: number;
  windowMs: number;
  /** Epoch ms of the request. */
  nowMs: number;
  /** Hits in the current window, the request being judged included. */
  currentHits: number;
  /** Hits in the window before it. */
  previousHits: number;
}

export interface SlidingWindowDecision {
  allowed: boolean;
  estimatedHits: number;
  /** Whole requests still allowed now (0 when over). */
  remaining: number;
  /** Seconds until the current window ends (when over: until a request would be let in again). */
  resetSeconds: number;
  /** When refused: whole seconds (at least 1) until a request would be let in, if no other arrives. */
  retryAfterSeconds: number | undefined;
}

/**
 * Start of the fixed window holding `nowMs`. Windows are aligned multiples of their length, so
 * every process (with reasonably synchronised clocks) names the same window without talking to
 * the others.
 */
export function windowStartOf(nowMs: number, windowMs: number): number {
  return nowMs - (nowMs % windowMs);
}

export function estimateHits(previousHits: number, currentHits: number, elapsedFraction: number): number {
  return previousHits * (1 - elapsedFraction) + currentHits;
}

export function decide(input: SlidingWindowInput): SlidingWindowDecision {
  const { limit, windowMs, nowMs, currentHits, previousHits } = input;
  const elapsedMs = nowMs - windowStartOf(nowMs, windowMs);
  const estimatedHits = estimateHits(previousHits, currentHits, elapsedMs / windowMs);
  const allowed = estimatedHits <= limit;
  const remaining = Math.max(0, Math.floor(limit - estimatedHits));
  const windowEndsInS = Math.ceil((windowMs - elapsedMs) / 1000);
  if (allowed) return { allowed, estimatedHits, remaining, resetSeconds: windowEndsInS, retryAfterSeconds: undefined };
  const retryAfterSeconds = Math.max(1, Math.ceil(msUntilAllowed(input, elapsedMs) / 1000));
  return { allowed, estimatedHits, remaining, resetSeconds: Math.max(windowEndsInS, retryAfterSeconds), retryAfterSeconds };
}

/**
 * How long until one more request would be allowed, if none arrives meanwhile. Refused requests
 * were counted too (the counter cannot know in advance), so this is what an obedient client
 * waits; one that keeps hammering keeps adding to its own count.
 */
function msUntilAllowed(input: SlidingWindowInput, elapsedMs: number): number {
  const { limit, windowMs, currentHits, previousHits } = input;
  // Still in this window: the previous window's share must decay below what is left of the limit.
  const leftInWindow = limit - currentHits - 1;
  if (leftInWindow >= 0 && previousHits > 0) {
    const at = windowMs * (1 - leftInWindow / previousHits);
    if (at < windowMs) return Math.max(0, at - elapsedMs);
  }
  // In the next window: this window's hits become the previous ones and decay from there.
  const fractionNeeded = Math.max(0, 1 - (limit - 1) / Math.max(1, currentHits));
  return windowMs - elapsedMs + windowMs * fractionNeeded;
}
