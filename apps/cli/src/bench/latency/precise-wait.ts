/**
 * Waits until a point on the monotonic clock with sub-millisecond accuracy when the event loop is
 * free: a coarse setTimeout (which fires on a 1 ms grid, usually late) for most of the wait, then
 * setImmediate turns for the last COARSE_MARGIN_MS. The fake engines use it so their delays are
 * what the script says; they still measure what they actually waited, since a busy loop makes any
 * timer late.
 */
const COARSE_MARGIN_MS = 2;

/** Resolves at `deadlineMs` (performance.now() time), or as soon as `signal` aborts. */
export function waitUntil(deadlineMs: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const poll = (): void => {
      if (signal?.aborted) return resolve();
      const leftMs = deadlineMs - performance.now();
      if (leftMs <= 0) return resolve();
      if (leftMs > COARSE_MARGIN_MS) setTimeout(poll, leftMs - COARSE_MARGIN_MS);
      else setImmediate(poll);
    };
    poll();
  });
}
