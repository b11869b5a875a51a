import {
  parseInboundMessage,
  type DtmfMessage,
  type MarkMessage,
  type MediaFormat,
  type MediaMessage,
  type StartMessage,
  type StopMessage,
} from '../messages/inbound-messages';
import { base64DecodedLength, decodeMediaPayloadInto } from '../messages/media-payload';
import { buildClearMessage, buildMarkMessage, buildMediaMessage, MULAW_FRAME_BYTES } from '../messages/outbound-messages';
import type {
  MediaStreamCounters,
  MediaStreamHandler,
  MediaStreamState,
  MediaStreamTransport,
  ProtocolErrorCode,
} from './media-stream-events';
import { OutboundFrames } from './outbound-frames';
import { OutstandingMarks } from './outstanding-marks';
import { rawExcerpt } from './raw-excerpt';

/**
 * Sees the agent's audio as it leaves, in whole frames (padding included), and every clear: what
 * the caller's playback buffer received and when it was emptied (the call's recording).
 */
export interface OutboundAudioObserver {
  frameSent(frame: Uint8Array): void;
  cleared(): void;
}

export interface MediaStreamSessionOptions {
  /** Bytes per outbound media message: a positive multiple of 160 (20 ms). Default 160. */
  outboundFrameBytes?: number;
}

/** Grows on demand; 1 KiB covers Twilio's usual 160-byte frames with room to spare. */
const INITIAL_PAYLOAD_CAPACITY_BYTES = 1024;

const SUPPORTED_MEDIA_FORMAT = { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 } as const;

type StreamMessage = MediaMessage | DtmfMessage | MarkMessage | StopMessage;

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

/** The first `length` bytes of `buffer` as a Uint8Array over the same memory (not a Buffer: see payloadView). */
function plainView(buffer: Buffer, length: number): Uint8Array {
  return new Uint8Array(buffer.buffer, buffer.byteOffset, length);
}

function isSupportedMediaFormat(format: MediaFormat): boolean {
  return (
    format.encoding === SUPPORTED_MEDIA_FORMAT.encoding &&
    format.sampleRate === SUPPORTED_MEDIA_FORMAT.sampleRate &&
    format.channels === SUPPORTED_MEDIA_FORMAT.channels
  );
}

/**
 * The Twilio Media Streams protocol for one socket, with no socket in it: feed it text frames with
 * receive(), hear about them through the handler, and send through the transport. Protocol
 * violations are reported to onProtocolError and never thrown; only an unsupported media format
 * ends the stream. Exceptions thrown by the handler or transport propagate to the caller.
 */
export class MediaStreamSession {
  private currentState: MediaStreamState = 'awaiting_connected';
  private currentStreamSid: string | null = null;
  private currentCallSid: string | null = null;
  private lastSequenceNumber = 0;
  private payloadBuffer = Buffer.alloc(INITIAL_PAYLOAD_CAPACITY_BYTES);
  // Reused while frames keep the same size, so a steady stream allocates no view per frame. A plain
  // Uint8Array, never a Buffer: Buffer#slice() returns a view, so a handler that "copies" a frame
  // with slice() would keep a window onto this reused buffer and see every later frame through it.
  private payloadView: Uint8Array = plainView(this.payloadBuffer, 0);
  private readonly marks = new OutstandingMarks();
  /** Twilio wants outbound media in whole 160-byte frames; the remainder (and marks placed in it) waits for more audio. */
  private readonly outbound: OutboundFrames;
  private readonly stats = zeroCounters();
  private outboundObserver: OutboundAudioObserver | undefined;

  constructor(
    private readonly handler: MediaStreamHandler,
    private readonly transport: MediaStreamTransport,
    options: MediaStreamSessionOptions = {},
  ) {
    const frameBytes = options.outboundFrameBytes ?? MULAW_FRAME_BYTES;
    if (!Number.isInteger(frameBytes) || frameBytes <= 0 || frameBytes % MULAW_FRAME_BYTES !== 0) {
      throw new RangeError(`outboundFrameBytes must be a positive multiple of ${MULAW_FRAME_BYTES}, got ${frameBytes}`);
    }
    this.outbound = new OutboundFrames(frameBytes, {
      sendFrame: (frame) => this.sendFrame(frame),
      sendMark: (name, positionBytes) => this.sendMarkNow(name, positionBytes),
    });
  }

  get state(): MediaStreamState {
    return this.currentState;
  }

  get streamSid(): string | null {
    return this.currentStreamSid;
  }

  get callSid(): string | null {
    return this.currentCallSid;
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

  /** A fresh snapshot on every read; later traffic does not change the returned object. */
  get counters(): MediaStreamCounters {
    return { ...this.stats };
  }

  receive(text: string): void {
    this.stats.messagesIn += 1;
    if (this.currentState === 'failed' || this.currentState === 'closed') {
      // Already reported (or the socket is gone): one error per stream, not one per frame.
      this.stats.messagesDropped += 1;
      return;
    }
    this.reportNeverSentMarks();
    const parsed = parseInboundMessage(text);
    if (!parsed.ok) {
      this.drop(parsed.error.code, parsed.error.message, text);
      return;
    }
    const message = parsed.message;
    if (message.event === 'connected') this.handleConnected(text);
    else if (message.event === 'start') this.handleStart(message, text);
    else this.handleStreamMessage(message, text);
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
    this.stats.paddingBytesOut += this.outbound.endOfUtterance();
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
    const neverSent = this.outbound.discard();
    this.transport.send(buildClearMessage(this.currentStreamSid as string));
    this.marks.markAllCleared();
    for (const name of neverSent) this.marks.addNeverSent(name);
    this.stats.marksNeverSent += neverSent.length;
    this.stats.clearsSent += 1;
    this.outboundObserver?.cleared();
    return true;
  }

  /** From now on `observer` sees every outbound frame and clear (one observer; a second replaces the first). */
  observeOutbound(observer: OutboundAudioObserver | undefined): void {
    this.outboundObserver = observer;
  }

  /** The socket is gone: refuse further sends and ignore late frames. */
  markTransportClosed(): void {
    this.currentState = 'closed';
    this.outbound.discard();
  }

  private canSend(): boolean {
    // Twilio accepts nothing before start (there is no streamSid to address) or after stop.
    if (this.currentState === 'streaming' && this.currentStreamSid !== null) return true;
    this.stats.sendsRefused += 1;
    return false;
  }

  private sendFrame(frame: Uint8Array): void {
    this.transport.send(buildMediaMessage(this.currentStreamSid as string, frame));
    this.stats.mediaFramesOut += 1;
    this.stats.mediaBytesOut += frame.length;
    this.outboundObserver?.frameSent(frame);
  }

  private sendMarkNow(name: string, positionBytes: number): void {
    this.transport.send(buildMarkMessage(this.currentStreamSid as string, name));
    this.marks.add(name, positionBytes);
    this.stats.marksSent += 1;
  }

  /** Cleared marks that never went out, once no older mark is still waiting for Twilio's echo. */
  private reportNeverSentMarks(): void {
    if (this.currentState !== 'streaming') return;
    for (const name of this.marks.takeNeverSentAtHead()) {
      this.handler.onMark({ name, wasCleared: true, neverSent: true, sequenceNumber: this.lastSequenceNumber });
    }
  }

  private handleConnected(text: string): void {
    if (this.currentState === 'awaiting_connected') {
      this.currentState = 'awaiting_start';
    } else if (this.currentState === 'stopped') {
      this.drop('message_after_stop', 'connected after stop', text);
    } else {
      this.drop('duplicate_connected', 'a second connected message', text);
    }
  }

  private handleStart(message: StartMessage, text: string): void {
    if (this.currentState === 'stopped') return this.drop('message_after_stop', 'start after stop', text);
    if (this.currentState === 'streaming') {
      return this.drop('duplicate_start', `a second start (stream ${this.currentStreamSid} is running)`, text);
    }
    if (this.currentState === 'awaiting_connected') {
      // Twilio always sends connected first, but nothing is lost without it: report and go on.
      this.report('missing_connected', 'start arrived before connected', text);
    }
    const { start } = message;
    if (!isSupportedMediaFormat(start.mediaFormat)) {
      const { encoding, sampleRate, channels } = start.mediaFormat;
      this.currentState = 'failed';
      this.stats.messagesDropped += 1;
      this.report(
        'unsupported_media_format',
        `media format ${encoding} ${sampleRate} Hz ${channels} ch is not supported (need audio/x-mulaw 8000 Hz mono)`,
        text,
        true,
      );
      return;
    }
    if (start.streamSid !== undefined && start.streamSid !== message.streamSid) {
      this.report('stream_sid_mismatch', 'start.streamSid differs from the message streamSid; using the latter', text);
    }
    this.currentStreamSid = message.streamSid;
    this.currentCallSid = start.callSid;
    this.lastSequenceNumber = message.sequenceNumber;
    this.currentState = 'streaming';
    this.handler.onStart({
      streamSid: message.streamSid,
      callSid: start.callSid,
      accountSid: start.accountSid,
      customParameters: start.customParameters,
      mediaFormat: start.mediaFormat,
      tracks: start.tracks,
      sequenceNumber: message.sequenceNumber,
    });
  }

  private handleStreamMessage(message: StreamMessage, text: string): void {
    if (this.currentState === 'stopped') return this.drop('message_after_stop', `${message.event} after stop`, text);
    if (this.currentState !== 'streaming') {
      return this.drop('message_before_start', `${message.event} before start`, text);
    }
    if (message.streamSid !== this.currentStreamSid) {
      return this.drop('stream_sid_mismatch', `${message.event} for another stream`, text);
    }
    if (!this.acceptSequenceNumber(message, text)) return;
    switch (message.event) {
      case 'media':
        return this.handleMedia(message, text);
      case 'dtmf':
        return this.handler.onDtmf({ digit: message.dtmf.digit, sequenceNumber: message.sequenceNumber });
      case 'mark':
        return this.handleMark(message, text);
      case 'stop':
        return this.handleStop(message);
    }
  }

  /**
   * Gaps are reported and the message still delivered (the data in hand is good). A number at or
   * below the last one is a replay: delivering it would duplicate audio or digits, so it is dropped,
   * except stop, which must never be lost.
   */
  private acceptSequenceNumber(message: StreamMessage, text: string): boolean {
    const sequenceNumber = message.sequenceNumber;
    const expected = this.lastSequenceNumber + 1;
    if (sequenceNumber === expected) {
      this.lastSequenceNumber = sequenceNumber;
      return true;
    }
    if (sequenceNumber > expected) {
      this.stats.sequenceGaps += 1;
      this.stats.missingMessages += sequenceNumber - expected;
      this.report('sequence_gap', `sequence jumped from ${this.lastSequenceNumber} to ${sequenceNumber}`, text);
      this.lastSequenceNumber = sequenceNumber;
      return true;
    }
    this.stats.sequenceDuplicates += 1;
    const detail = `sequence ${sequenceNumber} is not after ${this.lastSequenceNumber}`;
    if (message.event === 'stop') {
      this.report('sequence_out_of_order', `${detail}; stop honoured anyway`, text);
      return true;
    }
    this.drop('sequence_out_of_order', `${detail}; ${message.event} dropped`, text);
    return false;
  }

  private handleMedia(message: MediaMessage, text: string): void {
    const { payload } = message.media;
    const neededBytes = base64DecodedLength(payload);
    if (neededBytes !== null && neededBytes > this.payloadBuffer.length) {
      this.payloadBuffer = Buffer.alloc(Math.max(neededBytes, this.payloadBuffer.length * 2));
      this.payloadView = plainView(this.payloadBuffer, 0);
    }
    const decodedBytes = decodeMediaPayloadInto(payload, this.payloadBuffer);
    if (decodedBytes === null) return this.drop('invalid_media_payload', 'media.payload is not valid base64', text);
    if (this.payloadView.length !== decodedBytes) this.payloadView = plainView(this.payloadBuffer, decodedBytes);
    this.stats.mediaFramesIn += 1;
    this.stats.mediaBytesIn += decodedBytes;
    this.handler.onMedia({
      payload: this.payloadView,
      timestampMs: message.media.timestamp,
      chunk: message.media.chunk,
      sequenceNumber: message.sequenceNumber,
      track: message.media.track,
    });
  }

  private handleMark(message: MarkMessage, text: string): void {
    const name = message.mark.name;
    const resolved = this.marks.resolve(name);
    if (resolved === null) return this.drop('unknown_mark', `mark "${name.slice(0, 40)}" was not sent or already echoed`, text);
    if (resolved.skippedMarks > 0) {
      this.report('mark_out_of_order', `mark "${name.slice(0, 40)}" echoed before ${resolved.skippedMarks} older mark(s)`, text);
    }
    this.stats.marksEchoed += 1;
    if (!resolved.wasCleared) this.stats.mediaBytesHeard = Math.max(this.stats.mediaBytesHeard, resolved.bytesSentBefore);
    this.handler.onMark({ name, wasCleared: resolved.wasCleared, sequenceNumber: message.sequenceNumber });
    this.reportNeverSentMarks();
  }

  private handleStop(message: StopMessage): void {
    this.currentState = 'stopped';
    this.outbound.discard();
    this.handler.onStop({
      accountSid: message.stop.accountSid,
      callSid: message.stop.callSid,
      sequenceNumber: message.sequenceNumber,
    });
  }

  private drop(code: ProtocolErrorCode, message: string, text: string): void {
    this.stats.messagesDropped += 1;
    this.report(code, message, text);
  }

  private report(code: ProtocolErrorCode, message: string, text: string, fatal = false): void {
    this.stats.protocolErrors += 1;
    this.handler.onProtocolError({ code, message, rawExcerpt: rawExcerpt(text), fatal });
  }
}
