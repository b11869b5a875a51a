import type { MeasuredCallUsage } from '@switchboard/billing';

/**
 * A warm transfer taking a call off its media stream. While one is in progress the stream's end
 * (Twilio stops the stream when the caller's TwiML is replaced by the hold, or the agent ends its
 * session) suspends the call instead of ending it: records are flushed, the stream's usage is
 * measured and handed over, and the transfer decides how the call ends (connected, or taken back
 * to a new stream of the agent).
 */
export interface StreamHandOff {
  /** Resolves with what the stream measured once it has ended (never rejects). */
  readonly suspended: Promise<MeasuredCallUsage>;
  /**
   * The transfer did not take the call (Twilio refused the hold): the stream goes on as before.
   * Returns false when the stream had already ended: then the call is the canceller's to end.
   */
  cancel(): boolean;
}

/** The connection's side of a hand-off: whether it is on, and how to report the suspension. */
export class HandOffSlot {
  private active: { settle(usage: MeasuredCallUsage): void } | undefined;
  private ended = false;

  get handingOff(): boolean {
    return this.active !== undefined;
  }

  begin(): StreamHandOff {
    if (this.active || this.ended) throw new Error('this media stream is already handing its call off, or has ended');
    let settle!: (usage: MeasuredCallUsage) => void;
    const suspended = new Promise<MeasuredCallUsage>((resolve) => (settle = resolve));
    this.active = { settle };
    return {
      suspended,
      cancel: () => {
        if (this.ended) return false;
        this.active = undefined;
        return true;
      },
    };
  }

  /** The stream ended while handing off: the transfer gets its usage. */
  suspend(usage: MeasuredCallUsage): void {
    this.ended = true;
    this.active?.settle(usage);
  }

  /** The stream ended normally (no hand-off): a hand-off can no longer begin. */
  close(): void {
    this.ended = true;
  }
}
