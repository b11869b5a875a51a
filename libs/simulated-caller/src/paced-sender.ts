/** The clock and timers the pacing runs on; injected so tests can drive time by hand. */
export interface TimerScheduler {
  /** Monotonic milliseconds (performance.now in production). */
  nowMs(): number;
  setTimer(callback: () => void, delayMs: number): unknown;
  clearTimer(handle: unknown): void;
}

export const systemScheduler: TimerScheduler = {
  nowMs: () => performance.now(),
  setTimer: (callback, delayMs) => setTimeout(callback, delayMs),
  clearTimer: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export interface PacedTick {
  /** 0-based tick number. */
  index: number;
  /** When this tick was due: startMs + (index + 1) * intervalMs, never derived from when the last one ran. */
  deadlineMs: number;
  /** How late the tick actually ran (>= 0). */
  lateMs: number;
}

export interface PacedSenderOptions {
  intervalMs: number;
  scheduler?: TimerScheduler;
  /** Called if a tick handler throws; pacing stops first so a broken handler cannot spin. */
  onError?: (error: unknown) => void;
}

/**
 * Fires a callback every `intervalMs` in real time without drift: each tick has an absolute
 * deadline computed from the start, so timer lateness never accumulates (setInterval's does, which
 * would make a 60 s call last noticeably longer and slowly starve the server's jitter buffer).
 * When the event loop stalls, overdue ticks run back to back, the way a real network delivers a
 * burst after a hiccup, and the average rate stays exact.
 */
export class PacedSender {
  private readonly scheduler: TimerScheduler;
  private startMs = 0;
  private nextIndex = 0;
  private timer: unknown = undefined;
  private running = false;
  private worstLateMs = 0;
  private onTick: (tick: PacedTick) => void = () => undefined;

  constructor(private readonly options: PacedSenderOptions) {
    if (!(options.intervalMs > 0)) throw new RangeError(`intervalMs must be > 0, got ${options.intervalMs}`);
    this.scheduler = options.scheduler ?? systemScheduler;
  }

  get isRunning(): boolean {
    return this.running;
  }

  get ticksFired(): number {
    return this.nextIndex;
  }

  get maxLateMs(): number {
    return this.worstLateMs;
  }

  /** The first tick is due one interval after `startMs` (a frame is sent once its 20 ms exist). */
  start(onTick: (tick: PacedTick) => void, startMs = this.scheduler.nowMs()): void {
    if (this.running) throw new Error('PacedSender is already running');
    this.onTick = onTick;
    this.startMs = startMs;
    this.nextIndex = 0;
    this.worstLateMs = 0;
    this.running = true;
    this.schedule(this.scheduler.nowMs());
  }

  stop(): void {
    this.running = false;
    if (this.timer !== undefined) this.scheduler.clearTimer(this.timer);
    this.timer = undefined;
  }

  deadlineOf(index: number): number {
    return this.startMs + (index + 1) * this.options.intervalMs;
  }

  private readonly wake = (): void => {
    this.timer = undefined;
    const nowMs = this.scheduler.nowMs();
    while (this.running && this.deadlineOf(this.nextIndex) <= nowMs) {
      const deadlineMs = this.deadlineOf(this.nextIndex);
      const lateMs = nowMs - deadlineMs;
      if (lateMs > this.worstLateMs) this.worstLateMs = lateMs;
      const tick: PacedTick = { index: this.nextIndex, deadlineMs, lateMs };
      this.nextIndex += 1;
      try {
        this.onTick(tick);
      } catch (error) {
        this.stop();
        this.options.onError?.(error);
        return;
      }
    }
    if (this.running) this.schedule(nowMs);
  };

  private schedule(nowMs: number): void {
    this.timer = this.scheduler.setTimer(this.wake, Math.max(0, this.deadlineOf(this.nextIndex) - nowMs));
  }
}
