/**
 * The model's responses in the order they were first seen, and which of them are still being
 * generated. The neutral session API names no response on `createResponse` and reports no
 * "response created", so a response is known from its first audio, tool call or done; lines and
 * tool actions are matched to responses by these sequence numbers.
 */
export class ResponseLedger {
  private readonly seqs = new Map<string, number>();
  private nextSeq = 0;
  private readonly open = new Set<string>();
  private readonly finished = new Set<string>();
  /** A response was asked for and none has been seen since: it is on its way. */
  private requestedFromSeq: number | undefined;
  /** The highest sequence number of a response that produced audio. */
  private spokenSeq = -1;

  /** The number the next response seen will get. */
  get next(): number {
    return this.nextSeq;
  }

  get lastSpokenSeq(): number {
    return this.spokenSeq;
  }

  /** True while a response is being generated, or one was asked for and has not shown up yet. */
  get active(): boolean {
    return this.open.size > 0 || this.requestedFromSeq !== undefined;
  }

  /** The session asked the model for a response. */
  requested(): void {
    this.requestedFromSeq ??= this.nextSeq;
  }

  /** The response's sequence number; the first time a response is seen it gets the next one. */
  seqOf(responseId: string): number {
    let seq = this.seqs.get(responseId);
    if (seq === undefined) {
      seq = this.nextSeq++;
      this.seqs.set(responseId, seq);
      if (this.requestedFromSeq !== undefined && seq >= this.requestedFromSeq) this.requestedFromSeq = undefined;
      if (!this.finished.has(responseId)) this.open.add(responseId);
    }
    return seq;
  }

  /** A fragment (audio, tool call) of the response arrived. */
  seen(responseId: string, options: { spoke?: boolean } = {}): number {
    const seq = this.seqOf(responseId);
    if (options.spoke) this.spokenSeq = Math.max(this.spokenSeq, seq);
    return seq;
  }

  /** The response is done (completed, cancelled, failed): nothing more of it is generated. */
  done(responseId: string): number {
    this.finished.add(responseId);
    const seq = this.seqOf(responseId);
    this.open.delete(responseId);
    return seq;
  }
}
