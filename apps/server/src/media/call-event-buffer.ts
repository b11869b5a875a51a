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

/**
 * Batches a call's events into one INSERT per flush, so the media path never waits on the
 * database. Failed flushes keep their events and retry at the next flush.
 */
export class CallEventBuffer {
  private pending: PendingCallEvent[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  private dropped = 0;

  constructor(
    private readonly callId: string,
    private readonly events: CallEventRepository,
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
      .catch((error: unknown) => {
        this.logger.error({ callId: this.callId, err: error, count: batch.length }, 'call events not stored yet; will retry');
        this.pending = batch.concat(this.pending).slice(-MAX_PENDING_EVENTS);
        this.timer ??= setTimeout(() => void this.flush(), FLUSH_INTERVAL_MS * 4);
      })
      .finally(() => {
        this.flushing = undefined;
      });
    await this.flushing;
  }

  /** Final flush at the end of a call: no more timers afterwards. */
  async close(): Promise<void> {
    await this.flush();
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
