import { FrameChunker, MULAW_SILENCE } from '@switchboard/audio';

/** Where whole frames and marks go, in wire order. */
export interface OutboundFrameSink {
  sendFrame(frame: Uint8Array): void;
  /** `positionBytes`: outbound bytes before the point the agent marked (padding included). */
  sendMark(name: string, positionBytes: number): void;
}

interface DeferredMark {
  name: string;
  positionBytes: number;
}

/**
 * Agent audio cut into whole 20 ms frames, with marks placed on frame boundaries. Twilio plays only
 * whole frames, so a partial frame waits for more audio; a mark asked for meanwhile is not a reason
 * to pad it with silence (a click inside the agent's speech). It waits instead, and goes out right
 * after the frame that completes that remainder, still remembering the byte position it was asked
 * at, so what the caller heard is counted exactly. Only endOfUtterance() pads, once the agent has
 * nothing more to say. Every deferred mark belongs to the pending partial frame, so they all go out
 * together after the next frame.
 */
export class OutboundFrames {
  private readonly framer: FrameChunker<Uint8Array>;
  private deferred: DeferredMark[] = [];
  private bytesFramed = 0;

  constructor(
    frameBytes: number,
    private readonly sink: OutboundFrameSink,
    /** The byte that is silence in this encoding: mu-law's 0xFF by default, 0 for PCM16. */
    padValue: number = MULAW_SILENCE,
  ) {
    this.framer = new FrameChunker<Uint8Array>(Uint8Array, { frameLength: frameBytes, padValue, onFrame: (frame) => this.onFrame(frame) });
  }

  /** Bytes waiting for a whole frame. */
  get pendingBytes(): number {
    return this.framer.pendingLength;
  }

  /** Names of marks waiting for their frame, oldest first. */
  get deferredMarks(): string[] {
    return this.deferred.map((mark) => mark.name);
  }

  push(mulaw: Uint8Array): void {
    this.framer.push(mulaw);
  }

  /** Sends the mark now when no partial frame is pending, else right after the frame that completes it. */
  mark(name: string): void {
    const positionBytes = this.bytesFramed + this.framer.pendingLength;
    if (this.framer.pendingLength === 0) this.sink.sendMark(name, positionBytes);
    else this.deferred.push({ name, positionBytes });
  }

  /** The utterance is over: pads the partial frame (if any) with silence, which sends the deferred marks. Returns the padding bytes. */
  endOfUtterance(): number {
    return this.framer.flush('pad');
  }

  /** Drops the partial frame and the deferred marks (barge-in, stream over); returns the marks' names, oldest first. */
  discard(): string[] {
    this.framer.discard();
    const names = this.deferredMarks;
    this.deferred = [];
    return names;
  }

  private onFrame(frame: Uint8Array): void {
    this.sink.sendFrame(frame);
    this.bytesFramed += frame.length;
    if (this.deferred.length === 0) return;
    const due = this.deferred;
    this.deferred = [];
    for (const mark of due) this.sink.sendMark(mark.name, mark.positionBytes);
  }
}
