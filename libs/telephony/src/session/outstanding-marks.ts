interface OutstandingMark {
  name: string;
  /** True once a clear was sent while this mark was still waiting for its echo. */
  cleared: boolean;
  /** Media bytes sent before this mark: all of them have played when it echoes uncleared. */
  bytesSentBefore: number;
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
 */
export class OutstandingMarks {
  private readonly queue: OutstandingMark[] = [];

  get size(): number {
    return this.queue.length;
  }

  names(): string[] {
    return this.queue.map((mark) => mark.name);
  }

  add(name: string, bytesSentBefore = 0): void {
    this.queue.push({ name, cleared: false, bytesSentBefore });
  }

  /** Flags every outstanding mark as cleared; returns how many were flagged. */
  markAllCleared(): number {
    for (const mark of this.queue) mark.cleared = true;
    return this.queue.length;
  }

  /**
   * Removes the oldest outstanding mark with this name. Null when no such mark is outstanding
   * (a mark we never sent, or an echo seen twice).
   */
  resolve(name: string): ResolvedMark | null {
    const index = this.queue.findIndex((mark) => mark.name === name);
    if (index === -1) return null;
    const [mark] = this.queue.splice(index, 1);
    // Earlier marks stay outstanding: if Twilio reordered, their echoes may still come.
    return { wasCleared: mark?.cleared ?? false, skippedMarks: index, bytesSentBefore: mark?.bytesSentBefore ?? 0 };
  }
}
