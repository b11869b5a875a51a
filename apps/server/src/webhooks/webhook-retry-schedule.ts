/**
 * When a failed delivery is tried again: exponential backoff with full jitter (a random delay
 * between 0 and min(cap, base * 2^(attempt-1))), so a receiver coming back after an outage is not
 * hit by every delivery at the same instant. Never scheduled past the delivery's giveUpAfter: the
 * last retry happens at that moment at the latest, and an attempt failing at or after it ends the
 * delivery as failed (it can still be replayed by hand).
 */

export interface RetrySchedule {
  /** First retry's ceiling. */
  baseMs: number;
  /** No retry waits longer than this. */
  maxDelayMs: number;
}

export type NextDeliveryState = { status: 'pending'; nextAttemptAt: Date } | { status: 'failed' };

/** The ceiling of the delay after failed attempt number `attemptNumber` (1-based). */
export function retryDelayCeilingMs(attemptNumber: number, schedule: RetrySchedule): number {
  const exponent = Math.max(0, attemptNumber - 1);
  // 2^exponent overflows to Infinity long before it matters; Math.min clamps it to the cap.
  return Math.min(schedule.maxDelayMs, schedule.baseMs * 2 ** exponent);
}

export interface AfterFailureInput {
  /** The attempt that just failed (1-based). */
  attemptNumber: number;
  now: Date;
  giveUpAfter: Date;
  schedule: RetrySchedule;
  /** [0, 1); injectable so tests can pin the jitter. */
  random?: () => number;
}

export function nextStateAfterFailure(input: AfterFailureInput): NextDeliveryState {
  const { now, giveUpAfter } = input;
  if (now.getTime() >= giveUpAfter.getTime()) return { status: 'failed' };
  const random = input.random ?? Math.random;
  const delayMs = Math.floor(random() * retryDelayCeilingMs(input.attemptNumber, input.schedule));
  const nextAttemptAt = Math.min(now.getTime() + delayMs, giveUpAfter.getTime());
  return { status: 'pending', nextAttemptAt: new Date(nextAttemptAt) };
}
