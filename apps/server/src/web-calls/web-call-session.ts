import { OutboundFrames, OutstandingMarks, type OutboundPacingOptions } from '@switchboard/telephony';
import type { PcmSink } from './web-call-audio';
import { WEB_CALL_BYTES_PER_MS, WEB_CALL_FRAME_BYTES } from './web-call-protocol';

export interface WebCallCounters {
  audioMessagesIn: number;
  audioBytesIn: number;
  framesOut: number;
  audioBytesOut: number;
  paddingBytesOut: number;
  /** Outbound audio up to the last mark echoed as played: what the caller heard. */
  audioBytesHeard: number;
  marksSent: number;
  marksEchoed: number;
  marksCleared: number;
  clearsSent: number;
  protocolErrors: number;
}

/** A mark's echo, as the agent is told it. */
export interface MarkOutcome {
  name: string;
  wasCleared: boolean;
}

/**
 * The outbound half of a web call's protocol, and its mark bookkeeping: agent audio cut into whole
 * 20 ms binary frames (a partial frame waits for more audio; only the end of an utterance pads it
 * with silence), marks sent on frame boundaries, `clear` for barge-in. The same framing and mark
 * rules as the Twilio edge (OutboundFrames, OutstandingMarks), so both edges' agents hear "played"
 * and "cleared" the same way.
 */
export class WebCallSession implements PcmSink {
  readonly counters: WebCallCounters = {
    audioMessagesIn: 0,
    audioBytesIn: 0,
    framesOut: 0,
    audioBytesOut: 0,
    paddingBytesOut: 0,
    audioBytesHeard: 0,
    marksSent: 0,
    marksEchoed: 0,
    marksCleared: 0,
    clearsSent: 0,
    protocolErrors: 0,
  };
  private readonly outbound: OutboundFrames;
  private readonly marks = new OutstandingMarks();
  private open = true;
  private outboundObserver: { frameSent(pcm16k: Int16Array): void; cleared(): void } | undefined;

  constructor(
    private readonly transport: { sendBinary(frame: Uint8Array): void; sendText(text: string): void },
    private readonly onNeverSentMark: (name: string) => void,
    pacing?: Omit<OutboundPacingOptions, 'bytesPerMs'>,
  ) {
    this.outbound = new OutboundFrames(
      WEB_CALL_FRAME_BYTES,
      {
        sendFrame: (frame) => {
          this.transport.sendBinary(frame);
          this.counters.framesOut += 1;
          this.counters.audioBytesOut += frame.length;
          if (this.outboundObserver) this.outboundObserver.frameSent(pcmView(frame));
        },
        sendMark: (name, positionBytes) => {
          this.transport.sendText(JSON.stringify({ type: 'mark', name }));
          this.marks.add(name, positionBytes);
          this.counters.marksSent += 1;
        },
      },
      0,
      pacing && { ...pacing, bytesPerMs: WEB_CALL_BYTES_PER_MS },
    );
  }

  /** Whole frames waiting for the browser's playback to make room, in ms of audio (0 when not paced). */
  get waitingOutboundMs(): number {
    return this.outbound.waitingMs;
  }

  sendPcm(pcm16k: Int16Array): void {
    if (!this.open) return;
    // PCM16 little-endian on the wire: the machine's own byte order on every platform Node runs on here.
    this.outbound.push(new Uint8Array(pcm16k.buffer, pcm16k.byteOffset, pcm16k.byteLength));
  }

  sendMark(name: string): void {
    if (this.open && name.length > 0) this.outbound.mark(name);
  }

  endOfUtterance(): void {
    if (this.open) this.counters.paddingBytesOut += this.outbound.endOfUtterance();
  }

  clear(): void {
    if (!this.open) return;
    const neverSent = this.outbound.discard();
    this.transport.sendText('{"type":"clear"}');
    this.marks.markAllCleared();
    for (const name of neverSent) this.marks.addNeverSent(name);
    this.counters.clearsSent += 1;
    this.outboundObserver?.cleared();
  }

  /** From now on `observer` sees every frame sent to the browser and every clear (the call's recording). */
  observeOutbound(observer: { frameSent(pcm16k: Int16Array): void; cleared(): void } | undefined): void {
    this.outboundObserver = observer;
  }

  /** A mark came back from the browser; null when it was never sent or already echoed. */
  markEchoed(name: string): MarkOutcome | null {
    const resolved = this.marks.resolve(name);
    if (resolved === null) return null;
    this.counters.marksEchoed += 1;
    if (resolved.wasCleared) this.counters.marksCleared += 1;
    else this.counters.audioBytesHeard = Math.max(this.counters.audioBytesHeard, resolved.bytesSentBefore);
    // Marks a clear discarded before they went out, once every older mark has come back.
    for (const never of this.marks.takeNeverSentAtHead()) this.onNeverSentMark(never);
    return { name, wasCleared: resolved.wasCleared };
  }

  /** The socket is gone: nothing more is sent. */
  close(): void {
    this.open = false;
    this.outbound.discard();
  }
}

/** A frame's bytes as samples: a view when aligned, else a copy (Int16Array needs an even offset). */
function pcmView(frame: Uint8Array): Int16Array {
  if (frame.byteOffset % 2 === 0) return new Int16Array(frame.buffer, frame.byteOffset, frame.byteLength / 2);
  return new Int16Array(frame.slice().buffer);
}
