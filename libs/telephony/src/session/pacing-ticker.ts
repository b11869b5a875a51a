/** Something with audio waiting for its time to be sent. */
export interface PacedSender {
  /** Sends what is due; true while anything still waits. */
  release(): boolean;
  /** Drops what waits (the sender failed). */
  discard(): unknown;
}

/**
 * How often waiting audio is looked at. A beat only checks each waiting call's lead (a clock read and
 * a comparison); a call is written to when its lead has fallen to its refill point (OutboundPacer's
 * refillMs, 100 ms by default), so writes are per refill, not per beat, and a beat writes to about
 * half the waiting calls. A shorter beat spreads the writes thinner but wakes the event loop more:
 * at 10 ms, 100 wake-ups a second while any call had audio waiting showed in the latency bench's VAD
 * tail (overhead p99 at 100 calls 20.6-24.4 ms against 15.3-20.7 at 50 ms). The beat bounds how late
 * a refill can be: the lead less the refill less the beat is what the peer holds at least (350 ms at
 * the default 500 ms lead; OUTBOUND_AUDIO_LEAD_MS is at least 150, the refill at most half of it).
 */
export const PACING_BEAT_MS = 50;

/**
 * One timer for every paced call in the process, running only while some call has audio waiting:
 * a timer per call would cost a wake-up per call per beat, and an idle server would still tick.
 * Each beat lets every waiting sender send what its lead allows.
 */
export class PacingTicker {
  /** The process's ticker (the default for every OutboundPacer). */
  static readonly shared = new PacingTicker();
  private readonly waiting = new Set<PacedSender>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly beatMs: number = PACING_BEAT_MS,
    /** Told when a sender throws (its waiting audio is dropped); the process's warning by default. */
    private readonly onSendFailed: (error: unknown) => void = warnSendFailed,
  ) {}

  /** Senders with audio waiting. */
  get size(): number {
    return this.waiting.size;
  }

  /** `sender` has audio waiting: it is released on the coming beats until nothing waits. */
  wake(sender: PacedSender): void {
    this.waiting.add(sender);
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => this.beat(), this.beatMs);
    // Paced audio never keeps a process alive: a call that is over has discarded its queue.
    this.timer.unref();
  }

  forget(sender: PacedSender): void {
    this.waiting.delete(sender);
    if (this.waiting.size === 0) this.stop();
  }

  /** One beat: every waiting sender sends what is due. Exposed for tests that drive time themselves. */
  beat(): void {
    for (const sender of this.waiting) {
      let more: boolean;
      try {
        more = sender.release();
      } catch (error) {
        // A socket write that throws ends that call's pacing, never the process (a timer has no caller to tell).
        sender.discard();
        more = false;
        this.onSendFailed(error);
      }
      if (!more) this.waiting.delete(sender);
    }
    if (this.waiting.size === 0) this.stop();
  }

  private stop(): void {
    if (this.timer === undefined) return;
    clearInterval(this.timer);
    this.timer = undefined;
  }
}

function warnSendFailed(error: unknown): void {
  process.emitWarning(`a paced send failed, that call's waiting audio was dropped: ${error instanceof Error ? error.message : String(error)}`, { code: 'SWITCHBOARD_PACED_SEND_FAILED' });
}
