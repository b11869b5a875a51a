// The outbound half of a media stream: agent audio cut into whole frames, marks placed on them, and clears.
import { buildClearMessage, buildMarkMessage, buildMediaMessage, MULAW_FRAME_BYTES } from '../messages/outbound-messages';
import type { MediaStreamCounters, MediaStreamTransport } from './media-stream-events';
import { OutboundFrames } from './outbound-frames';
import type { OutboundPacingOptions } from './outbound-pacer';
import type { OutstandingMarks } from './outstanding-marks';

/**
 * Sees the agent's audio as it leaves, in whole frames (padding included), and every clear: what
 * the caller's playback buffer received and when it was emptied (the call's recording).
 */
export interface OutboundAudioObserver {
  frameSent(frame: Uint8Array): void;
  cleared(): void;
}

/**
 * What a MediaStreamSession sends once it is streaming. The session decides whether sending is
 * allowed at all (there is no stream to address before start or after stop); this side frames the
 * audio, addresses each message to the stream, counts into the session's counters, and adds the
 * marks it sends to the session's outstanding marks, which the inbound side resolves on echo.
 */
export class MediaStreamOutbound {
  /** Twilio wants outbound media in whole 160-byte frames; the remainder (and marks placed in it) waits for more audio. */
  private readonly frames: OutboundFrames;
  private observer: OutboundAudioObserver | undefined;

  constructor(
    private readonly transport: MediaStreamTransport,
    private readonly marks: OutstandingMarks,
    private readonly stats: MediaStreamCounters,
    /** The stream every message is addressed to; only read while streaming, when it is known. */
    private readonly streamSid: () => string,
    frameBytes: number = MULAW_FRAME_BYTES,
    pacing?: Omit<OutboundPacingOptions, 'bytesPerMs'>,
  ) {
    if (!Number.isInteger(frameBytes) || frameBytes <= 0 || frameBytes % MULAW_FRAME_BYTES !== 0) {
      throw new RangeError(`outboundFrameBytes must be a positive multiple of ${MULAW_FRAME_BYTES}, got ${frameBytes}`);
    }
    this.frames = new OutboundFrames(
      frameBytes,
      { sendFrame: (frame) => this.sendFrame(frame), sendMark: (name, positionBytes) => this.sendMarkNow(name, positionBytes) },
      undefined,
      // mu-law 8 kHz: 8 bytes per millisecond.
      pacing && { ...pacing, bytesPerMs: MULAW_FRAME_BYTES / 20 },
    );
  }

  /** Names of marks waiting for the frame that completes the pending remainder, oldest first. */
  get deferredMarks(): string[] {
    return this.frames.deferredMarks;
  }

  /** Outbound bytes held back until a full frame or endOfUtterance(). */
  get pendingBytes(): number {
    return this.frames.pendingBytes;
  }

  /** Whole frames waiting for the caller's playback to make room (ms of audio; 0 when not paced). */
  get waitingMs(): number {
    return this.frames.waitingMs;
  }

  /** Full frames go out now; the remainder waits for more audio. Copied before this returns. */
  push(mulaw: Uint8Array): void {
    this.frames.push(mulaw);
  }

  /** The held-back remainder goes out padded with silence, followed by the marks that waited for it. */
  endOfUtterance(): void {
    this.stats.paddingBytesOut += this.frames.endOfUtterance();
  }

  /** Sends `name` now, or right after the frame that completes the pending remainder. */
  mark(name: string): void {
    this.frames.mark(name);
  }

  /** Barge-in: see MediaStreamSession.clear(). */
  clear(): void {
    const neverSent = this.frames.discard();
    this.transport.send(buildClearMessage(this.streamSid()));
    this.marks.markAllCleared();
    for (const name of neverSent) this.marks.addNeverSent(name);
    this.stats.marksNeverSent += neverSent.length;
    this.stats.clearsSent += 1;
    this.observer?.cleared();
  }

  /** Drops the held-back remainder, what waits for its time, and their marks without telling Twilio (the stream is over). */
  discard(): void {
    this.frames.discard();
  }

  /** One observer; a second replaces the first. */
  observe(observer: OutboundAudioObserver | undefined): void {
    this.observer = observer;
  }

  private sendFrame(frame: Uint8Array): void {
    this.transport.send(buildMediaMessage(this.streamSid(), frame));
    this.stats.mediaFramesOut += 1;
    this.stats.mediaBytesOut += frame.length;
    this.observer?.frameSent(frame);
  }

  private sendMarkNow(name: string, positionBytes: number): void {
    this.transport.send(buildMarkMessage(this.streamSid(), name));
    this.marks.add(name, positionBytes);
    this.stats.marksSent += 1;
  }
}
