import type { CallEventRepository } from '@switchboard/persistence';
import type { PinoLogger } from 'nestjs-pino';

export interface PendingCallEvent {
  type: string;
  at: Date;
  payload: Record<string, unknown>;
}

/** Flush at least this often so a live call's log is visible through the API within a second. */
const FLUSH_INTERVAL_MS = 500;
/** ...or as soon as this many events are waiting, to bound memory and row batches. */
const FLUSH_BATCH_SIZE = 100;
/** A database outage must not grow a call's buffer without bound; older events beyond this are counted and dropped. */
const MAX_PENDING_EVENTS = 5_000;
/** After a failed write: the first retry waits this long, each later one twice as long, up to the cap. */
const RETRY_BASE_MS = 2_000;
const RETRY_MAX_MS = 30_000;

/**
 * Batches a call's events into one INSERT per flush, so the media path never waits on the
 * database. Failed flushes keep their events and retry with backoff, also after the call closed:
 * a database outage at hang-up delays a call's log, it does not lose it.
 */
export class CallEventBuffer {
  private pending: PendingCallEvent[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  private dropped = 0;
  private failedFlushes = 0;
  private closed = false;

  constructor(
    private readonly callId: string,
    private readonly events: Pick<CallEventRepository, 'appendMany'>,
    private readonly logger: PinoLogger,
  ) {}

  add(type: string, payload: Record<string, unknown> = {}, at = new Date()): void {
    if (this.pending.length >= MAX_PENDING_EVENTS) {
      this.pending.shift();
      this.dropped += 1;
    }
    this.pending.push({ type, at, payload });
    if (this.pending.length >= FLUSH_BATCH_SIZE) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), FLUSH_INTERVAL_MS);
  }

  /** Writes everything pending. Safe to call concurrently; never rejects. */
  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    while (this.flushing) await this.flushing;
    if (this.pending.length === 0 && this.dropped === 0) return;
    const batch = this.pending;
    this.pending = [];
    if (this.dropped > 0) {
      batch.push({ type: 'events_dropped', at: new Date(), payload: { count: this.dropped } });
      this.dropped = 0;
    }
    this.flushing = this.events
      .appendMany(this.callId, batch)
      .then(() => {
        this.failedFlushes = 0;
      })
      .catch((error: unknown) => {
        this.failedFlushes += 1;
        this.logger.error({ callId: this.callId, err: error, count: batch.length, closed: this.closed }, 'call events not stored yet; will retry');
        this.pending = batch.concat(this.pending).slice(-MAX_PENDING_EVENTS);
        const delayMs = Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** (this.failedFlushes - 1));
        this.timer ??= setTimeout(() => void this.flush(), delayMs);
        // A closed call's retries must not keep a stopping process alive; the process's own
        // lifetime is then the bound (events of a process that exits mid-outage are lost with it).
        if (this.closed) this.timer.unref();
      })
      .finally(() => {
        this.flushing = undefined;
      });
    await this.flushing;
  }

  /**
   * Final flush at the end of a call. What cannot be written now stays queued and is retried until
   * it is (resolves after the first try either way).
   */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
  }

  /** Events not written yet (for tests and diagnostics). */
  get pendingCount(): number {
    return this.pending.length;
  }
}
