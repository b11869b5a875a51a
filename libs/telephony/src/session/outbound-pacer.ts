import type { OutboundFrameSink } from './outbound-frames';
import { PacingTicker } from './pacing-ticker';

/** How far ahead of the caller's playback the edge may send, unless configured otherwise. */
export const DEFAULT_OUTBOUND_LEAD_MS = 500;

export interface OutboundPacingOptions {
  /** Audio the peer may hold ahead of what it has played (ms). At least one frame's worth. */
  maxLeadMs: number;
  /** Wire bytes per millisecond of audio: 8 for mu-law 8 kHz, 32 for PCM16 16 kHz. */
  bytesPerMs: number;
  /** Monotonic milliseconds; performance.now() unless a test drives time. */
  now?: () => number;
  /** Wakes paced senders that have audio waiting; one is shared by every call in the process. */
  ticker?: PacingTicker;
  /**
   * Waiting audio is topped up only once the lead has fallen this far below `maxLeadMs` (ms), then in
   * one go: a call sends a few frames in one write every `refillMs` rather than one frame a beat.
   * Default: DEFAULT_REFILL_MS, at most half the lead. 0: every frame as soon as it fits.
   */
  refillMs?: number;
}

/**
 * How far the lead falls before a paced call is topped up. Each call's refills fall at its own phase
 * (set by when its reply started), so a 50 ms beat writes to about half the waiting calls instead of
 * to all of them: on a saturated 2-core machine a write to every waiting call on every beat doubled
 * reply latency at 250 calls.
 */
export const DEFAULT_REFILL_MS = 100;

/** Sent items are dropped from the front of the queue in batches of at least this many (not one shift() per frame). */
const COMPACT_AFTER = 256;

type Waiting = { frame: Uint8Array; mark?: undefined } | { frame?: undefined; mark: string; positionBytes: number };

/**
 * Sends the agent's speech no faster than the caller plays it: at most `maxLeadMs` of audio sits in
 * the peer's buffer, the rest waits here. An agent whose model or TTS runs far ahead of real time
 * (or never stops) then costs the peer half a second of buffer instead of minutes, a barge-in's
 * clear drops what waits here rather than asking the peer to throw away a flood, and one call's
 * burst of frames cannot hold the event loop while other calls wait for their turn.
 *
 * The peer's playback is modelled as a clock: each frame sent extends `playsUntil` by its length,
 * starting from now when the peer had run dry. The first frames of an utterance leave at once (up
 * to the lead), so pacing adds nothing to the time until the caller hears the agent. Marks keep
 * their place in the audio: one waits behind the frames queued before it and leaves right after
 * the last of them.
 */
export class OutboundPacer implements OutboundFrameSink {
  private readonly waiting: Waiting[] = [];
  private head = 0;
  private playsUntil = 0;
  private readonly now: () => number;
  private readonly ticker: PacingTicker;
  private readonly maxLeadMs: number;
  private readonly bytesPerMs: number;
  private readonly refillMs: number;

  constructor(
    private readonly wire: OutboundFrameSink,
    options: OutboundPacingOptions,
  ) {
    if (!(options.bytesPerMs > 0)) throw new RangeError(`bytesPerMs must be positive, got ${options.bytesPerMs}`);
    if (!(options.maxLeadMs > 0)) throw new RangeError(`maxLeadMs must be positive, got ${options.maxLeadMs}`);
    this.maxLeadMs = options.maxLeadMs;
    this.bytesPerMs = options.bytesPerMs;
    this.refillMs = Math.max(0, Math.min(options.refillMs ?? DEFAULT_REFILL_MS, options.maxLeadMs / 2));
    this.now = options.now ?? (() => performance.now());
    this.ticker = options.ticker ?? PacingTicker.shared;
  }

  /** Audio waiting here, not yet sent (ms). */
  get waitingMs(): number {
    let bytes = 0;
    for (let i = this.head; i < this.waiting.length; i++) bytes += this.waiting[i]!.frame?.length ?? 0;
    return bytes / this.bytesPerMs;
  }

  /** Audio sent that the peer has not played yet, by this side's clock (ms). */
  get leadMs(): number {
    return Math.max(0, this.playsUntil - this.now());
  }

  /** Sends `frame` now when the lead allows and nothing waits before it; otherwise it waits (copied: the framer reuses its buffer). */
  sendFrame(frame: Uint8Array): void {
    if (this.head === this.waiting.length && this.fits(frame.length, this.now())) return this.emit(frame);
    this.waiting.push({ frame: frame.slice() });
    this.ticker.wake(this);
  }

  sendMark(name: string, positionBytes: number): void {
    if (this.head === this.waiting.length) return this.wire.sendMark(name, positionBytes);
    this.waiting.push({ mark: name, positionBytes });
  }

  /**
   * Sends what the lead allows now, in order. Returns true while anything still waits (the ticker
   * calls again on its next beat).
   */
  release(): boolean {
    const now = this.now();
    // Not yet down to the refill point: nothing to do this beat (the peer still holds enough).
    if (this.refillMs > 0 && this.playsUntil - now > this.maxLeadMs - this.refillMs) return true;
    while (this.head < this.waiting.length) {
      const next = this.waiting[this.head]!;
      if (next.frame !== undefined) {
        if (!this.fits(next.frame.length, now)) return true;
        this.head += 1;
        this.emit(next.frame);
      } else {
        this.head += 1;
        this.wire.sendMark(next.mark, next.positionBytes);
      }
      if (this.head >= COMPACT_AFTER && this.head * 2 >= this.waiting.length) {
        this.waiting.splice(0, this.head);
        this.head = 0;
      }
    }
    this.waiting.length = 0;
    this.head = 0;
    return false;
  }

  /**
   * Drops everything waiting (barge-in, the stream is over) and returns the names of the marks that
   * waited, oldest first: they never reach the peer, so nobody will echo them.
   */
  discard(): string[] {
    const marks: string[] = [];
    for (let i = this.head; i < this.waiting.length; i++) {
      const item = this.waiting[i]!;
      if (item.mark !== undefined) marks.push(item.mark);
    }
    this.waiting.length = 0;
    this.head = 0;
    this.ticker.forget(this);
    return marks;
  }

  /** The peer emptied its buffer (a clear was sent): its playback clock starts again from now. */
  peerCleared(): void {
    this.playsUntil = 0;
  }

  private fits(bytes: number, now: number): boolean {
    const lead = Math.max(0, this.playsUntil - now);
    // A frame longer than the whole lead still goes out once the peer has run dry.
    return lead === 0 || lead + bytes / this.bytesPerMs <= this.maxLeadMs;
  }

  private emit(frame: Uint8Array): void {
    const now = this.now();
    this.playsUntil = Math.max(this.playsUntil, now) + frame.length / this.bytesPerMs;
    this.wire.sendFrame(frame);
  }
}
