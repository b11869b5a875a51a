// One media stream's public face: the lifecycle it exposes and the sends it allows, over its inbound and outbound halves.
import type { MediaStreamCounters, MediaStreamHandler, MediaStreamState, MediaStreamTransport } from './media-stream-events';
import { MediaStreamInbound } from './media-stream-inbound';
import { MediaStreamOutbound, type OutboundAudioObserver } from './media-stream-outbound';
import type { OutboundPacingOptions } from './outbound-pacer';
import { OutstandingMarks } from './outstanding-marks';

export interface MediaStreamSessionOptions {
  /** Bytes per outbound media message: a positive multiple of 160 (20 ms). Default 160. */
  outboundFrameBytes?: number;
  /** Send the agent's audio no faster than it plays, at most `maxLeadMs` ahead (see OutboundPacer). Absent: as fast as it comes. */
  pacing?: Omit<OutboundPacingOptions, 'bytesPerMs'>;
}

function zeroCounters(): MediaStreamCounters {
  return {
    messagesIn: 0,
    mediaFramesIn: 0,
    mediaBytesIn: 0,
    mediaFramesOut: 0,
    mediaBytesOut: 0,
    paddingBytesOut: 0,
    mediaBytesHeard: 0,
    marksSent: 0,
    marksEchoed: 0,
    marksNeverSent: 0,
    clearsSent: 0,
    protocolErrors: 0,
    sequenceGaps: 0,
    missingMessages: 0,
    sequenceDuplicates: 0,
    messagesDropped: 0,
    sendsRefused: 0,
  };
}

/**
 * The Twilio Media Streams protocol for one socket, with no socket in it: feed it text frames with
 * receive(), hear about them through the handler, and send through the transport. Protocol
 * violations are reported to onProtocolError and never thrown; only an unsupported media format
 * ends the stream. Exceptions thrown by the handler or transport propagate to the caller.
 */
export class MediaStreamSession {
  /** Shared by both halves: the outbound side counts what it sends, the inbound side what arrives. */
  private readonly stats = zeroCounters();
  /** Sent and not yet echoed: the outbound side adds them, Twilio's echoes (inbound) resolve them. */
  private readonly marks = new OutstandingMarks();
  private readonly outbound: MediaStreamOutbound;
  private readonly inbound: MediaStreamInbound;

  constructor(handler: MediaStreamHandler, transport: MediaStreamTransport, options: MediaStreamSessionOptions = {}) {
    // The streamSid is read only once canSend() has seen it set.
    this.outbound = new MediaStreamOutbound(transport, this.marks, this.stats, () => this.inbound.streamSid as string, options.outboundFrameBytes, options.pacing);
    this.inbound = new MediaStreamInbound(handler, this.marks, this.stats, this.outbound);
  }

  get state(): MediaStreamState {
    return this.inbound.state;
  }

  get streamSid(): string | null {
    return this.inbound.streamSid;
  }

  get callSid(): string | null {
    return this.inbound.callSid;
  }

  /** Names of marks sent and not yet echoed, oldest first. */
  get outstandingMarks(): string[] {
    return this.marks.names();
  }

  /** Names of marks waiting for the frame that completes the pending remainder, oldest first. */
  get deferredMarks(): string[] {
    return this.outbound.deferredMarks;
  }

  /** Outbound bytes held back until a full frame or endOfUtterance(). */
  get pendingOutboundBytes(): number {
    return this.outbound.pendingBytes;
  }

  /** Whole frames waiting for the caller's playback to make room, in ms of audio (0 when not paced). */
  get waitingOutboundMs(): number {
    return this.outbound.waitingMs;
  }

  /** A fresh snapshot on every read; later traffic does not change the returned object. */
  get counters(): MediaStreamCounters {
    return { ...this.stats };
  }

  /** One text frame from the socket. */
  receive(text: string): void {
    this.inbound.receive(text);
  }

  /**
   * Queues mu-law 8 kHz audio; full frames go out now, the remainder waits for more audio (or
   * endOfUtterance). Copied before this returns: the caller may reuse `mulaw`. False when not streaming.
   */
  sendAudio(mulaw: Uint8Array): boolean {
    if (!this.canSend()) return false;
    this.outbound.push(mulaw);
    return true;
  }

  /**
   * The agent has finished speaking for now: the held-back remainder goes out padded with silence
   * to a whole frame, followed by the marks that waited for it. The only place padding happens.
   */
  endOfUtterance(): boolean {
    if (!this.canSend()) return false;
    this.outbound.endOfUtterance();
    return true;
  }

  /**
   * Asks Twilio to echo `name` once everything queued before it has played. With no partial frame
   * pending it goes out at once; otherwise right after the frame that completes the remainder
   * (never padding it), standing for the byte position at which it was asked.
   */
  sendMark(name: string): boolean {
    if (typeof name !== 'string' || name.length === 0) {
      this.stats.sendsRefused += 1;
      return false;
    }
    if (!this.canSend()) return false;
    this.outbound.mark(name);
    return true;
  }

  /**
   * Barge-in: drops the local remainder and Twilio's buffer; outstanding marks become "cleared".
   * Marks that were still waiting for their frame never reach Twilio, so nobody would echo them:
   * they are reported through onMark as cleared (neverSent) once every older mark's echo has come,
   * at the next message received, never from inside this call.
   */
  clear(): boolean {
    if (!this.canSend()) return false;
    this.outbound.clear();
    return true;
  }

  /** From now on `observer` sees every outbound frame and clear (one observer; a second replaces the first). */
  observeOutbound(observer: OutboundAudioObserver | undefined): void {
    this.outbound.observe(observer);
  }

  /** The socket is gone: refuse further sends and ignore late frames. */
  markTransportClosed(): void {
    this.inbound.transportClosed();
    this.outbound.discard();
  }

  private canSend(): boolean {
    // Twilio accepts nothing before start (there is no streamSid to address) or after stop.
    if (this.inbound.state === 'streaming' && this.inbound.streamSid !== null) return true;
    this.stats.sendsRefused += 1;
    return false;
  }
}
