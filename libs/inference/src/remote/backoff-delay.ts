import type { RemoteRetryOptions } from './remote-policy-options';

/**
 * Delay before retry number `retryNumber` (1-based): exponential from initialDelayMs, capped at
 * maxDelayMs, with "equal jitter" (half fixed, half random) so that calls which failed together
 * do not all come back at the same instant, yet no retry is near-immediate. A server's
 * Retry-After is a floor: waiting less would only earn another 429.
 */
export function backoffDelayMs(
  retryNumber: number,
  options: Pick<RemoteRetryOptions, 'initialDelayMs' | 'maxDelayMs'>,
  retryAfterMs?: number,
  random: () => number = Math.random,
): number {
  const exponentialMs = Math.min(options.maxDelayMs, options.initialDelayMs * 2 ** Math.max(0, retryNumber - 1));
  const jitteredMs = exponentialMs / 2 + random() * (exponentialMs / 2);
  return Math.max(jitteredMs, retryAfterMs ?? 0);
}
