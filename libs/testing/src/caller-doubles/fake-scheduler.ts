import type { TimerScheduler } from '@switchboard/simulated-caller';

interface FakeTimer {
  id: number;
  fireAtMs: number;
  callback: () => void;
}

/**
 * A hand-driven clock for pacing tests. `lateByMs` models a busy event loop: every timer fires
 * that much after the time it asked for, which is what exposes schedulers that accumulate drift.
 */
export class FakeScheduler implements TimerScheduler {
  private current: number;
  private timers: FakeTimer[] = [];
  private nextId = 1;

  constructor(
    startMs = 0,
    private readonly lateByMs: (timerNumber: number) => number = () => 0,
  ) {
    this.current = startMs;
  }

  nowMs(): number {
    return this.current;
  }

  setTimer(callback: () => void, delayMs: number): unknown {
    const id = this.nextId++;
    this.timers.push({ id, fireAtMs: this.current + Math.max(0, delayMs) + this.lateByMs(id), callback });
    return id;
  }

  clearTimer(handle: unknown): void {
    this.timers = this.timers.filter((timer) => timer.id !== handle);
  }

  get pendingTimers(): number {
    return this.timers.length;
  }

  /** Moves time forward to `untilMs`, firing due timers in order (as a real event loop would). */
  runUntil(untilMs: number): void {
    for (;;) {
      const next = this.timers.reduce<FakeTimer | undefined>(
        (earliest, timer) => (earliest === undefined || timer.fireAtMs < earliest.fireAtMs ? timer : earliest),
        undefined,
      );
      if (!next || next.fireAtMs > untilMs) break;
      this.timers = this.timers.filter((timer) => timer !== next);
      this.current = Math.max(this.current, next.fireAtMs);
      next.callback();
    }
    this.current = Math.max(this.current, untilMs);
  }

  /** Jumps the clock without firing anything: an event-loop stall. */
  stall(durationMs: number): void {
    this.current += durationMs;
  }
}
