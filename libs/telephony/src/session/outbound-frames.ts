import { FrameChunker, MULAW_SILENCE } from '@switchboard/audio';
import { OutboundPacer, type OutboundPacingOptions } from './outbound-pacer';

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
  private readonly sink: OutboundFrameSink;
  /** Holds whole frames (and the marks between them) the peer's playback is not ready for; absent: everything goes out at once. */
  private readonly pacer: OutboundPacer | undefined;

  constructor(
    frameBytes: number,
    wire: OutboundFrameSink,
    /** The byte that is silence in this encoding: mu-law's 0xFF by default, 0 for PCM16. */
    padValue: number = MULAW_SILENCE,
    /** Send no faster than the peer plays, at most `maxLeadMs` ahead (see OutboundPacer). */
    pacing?: OutboundPacingOptions,
  ) {
    this.pacer = pacing && new OutboundPacer(wire, pacing);
    this.sink = this.pacer ?? wire;
    this.framer = new FrameChunker<Uint8Array>(Uint8Array, { frameLength: frameBytes, padValue, onFrame: (frame) => this.onFrame(frame) });
  }

  /** Bytes waiting for a whole frame. */
  get pendingBytes(): number {
    return this.framer.pendingLength;
  }

  /** Whole frames waiting for the peer's playback to make room, in ms of audio (0 when not paced). */
  get waitingMs(): number {
    return this.pacer?.waitingMs ?? 0;
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

  /**
   * Drops what waits for its time, the partial frame and the deferred marks (barge-in, stream over),
   * and starts the peer's playback clock again (its buffer was cleared or is gone). Returns the
   * marks' names, oldest first: those that waited for their time are older than the partial frame's.
   */
  discard(): string[] {
    const paced = this.pacer?.discard() ?? [];
    this.pacer?.peerCleared();
    this.framer.discard();
    const names = [...paced, ...this.deferredMarks];
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
