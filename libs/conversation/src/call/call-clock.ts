/**
 * Milliseconds since the call started (calls.started_at), at sub-millisecond resolution. Anchored
 * once on the monotonic clock so offsets never jump when the wall clock is adjusted mid-call.
 */
export class CallClock {
  private readonly anchorMonotonicMs: number;

  constructor(callStartedAt: Date, nowWallMs = Date.now(), nowMonotonicMs = performance.now()) {
    this.anchorMonotonicMs = nowMonotonicMs - (nowWallMs - callStartedAt.getTime());
  }

  nowMs(): number {
    return performance.now() - this.anchorMonotonicMs;
  }

  /** Rounded to 0.1 ms: what records store. */
  static round(ms: number): number {
    return Math.round(ms * 10) / 10;
  }
}
