interface OutstandingMark {
  name: string;
  /** True once a clear was sent while this mark was still waiting for its echo. */
  cleared: boolean;
  /** Media bytes before the point this mark stands for: all of them have played when it echoes uncleared. */
  bytesSentBefore: number;
  /** False for a mark a clear discarded before it went out: Twilio will never echo it. */
  sent: boolean;
}

export interface ResolvedMark {
  wasCleared: boolean;
  /** Marks sent before this one that were never echoed (0 when Twilio kept its in-order promise). */
  skippedMarks: number;
  bytesSentBefore: number;
}

/**
 * Marks sent to Twilio and not yet echoed, in send order. Twilio echoes marks in order once the
 * audio before them has played, and echoes all of them at once after a clear; remembering which
 * ones were outstanding at the clear is what lets the runtime tell "played" from "discarded".
 * A mark the agent asked for that a clear discarded before it was sent (it was waiting for its
 * frame) queues here too, after the sent ones, so it is reported as cleared in the order Twilio
 * would have echoed it (see takeNeverSentAtHead).
 */
export class OutstandingMarks {
  private readonly queue: OutstandingMark[] = [];
  private neverSent = 0;

  get size(): number {
    return this.queue.length;
  }

  names(): string[] {
    return this.queue.filter((mark) => mark.sent).map((mark) => mark.name);
  }

  add(name: string, bytesSentBefore = 0): void {
    this.queue.push({ name, cleared: false, bytesSentBefore, sent: true });
  }

  /** A mark discarded by a clear before it was sent: cleared, and due once every older mark has been echoed. */
  addNeverSent(name: string): void {
    this.queue.push({ name, cleared: true, bytesSentBefore: 0, sent: false });
    this.neverSent += 1;
  }

  /** Flags every outstanding mark as cleared; returns how many were flagged. */
  markAllCleared(): number {
    for (const mark of this.queue) mark.cleared = true;
    return this.queue.length;
  }

  /**
   * Removes the oldest outstanding sent mark with this name. Null when no such mark is outstanding
   * (a mark we never sent, or an echo seen twice).
   */
  resolve(name: string): ResolvedMark | null {
    const index = this.queue.findIndex((mark) => mark.sent && mark.name === name);
    if (index === -1) return null;
    const skippedMarks = this.queue.slice(0, index).filter((mark) => mark.sent).length;
    const [mark] = this.queue.splice(index, 1);
    // Earlier marks stay outstanding: if Twilio reordered, their echoes may still come.
    return { wasCleared: mark?.cleared ?? false, skippedMarks, bytesSentBefore: mark?.bytesSentBefore ?? 0 };
  }

  /** Never-sent marks now at the head of the queue (every older mark has been echoed): removed and returned, oldest first. */
  takeNeverSentAtHead(): string[] {
    if (this.neverSent === 0) return [];
    const names: string[] = [];
    while (this.queue[0]?.sent === false) names.push(this.queue.shift()!.name);
    this.neverSent -= names.length;
    return names;
  }
}
