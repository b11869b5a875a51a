// The inbound half of a media stream: Twilio's messages parsed, checked against the stream's state and sequence, and delivered.
import {
  parseInboundMessage,
  type DtmfMessage,
  type MarkMessage,
  type MediaFormat,
  type MediaMessage,
  type StartMessage,
  type StopMessage,
} from '../messages/inbound-messages';
import type { MediaStreamCounters, MediaStreamHandler, MediaStreamState, ProtocolErrorCode } from './media-stream-events';
import { InboundPayloadBuffer } from './inbound-payload-buffer';
import type { MediaStreamOutbound } from './media-stream-outbound';
import type { OutstandingMarks } from './outstanding-marks';
import { rawExcerpt } from './raw-excerpt';

const SUPPORTED_MEDIA_FORMAT = { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 } as const;

type StreamMessage = MediaMessage | DtmfMessage | MarkMessage | StopMessage;

function isSupportedMediaFormat(format: MediaFormat): boolean {
  return (
    format.encoding === SUPPORTED_MEDIA_FORMAT.encoding &&
    format.sampleRate === SUPPORTED_MEDIA_FORMAT.sampleRate &&
    format.channels === SUPPORTED_MEDIA_FORMAT.channels
  );
}

/**
 * Owns the stream's lifecycle state (connected, start, stop) as Twilio's messages drive it; the
 * MediaStreamSession reads it to decide whether sending is allowed. Protocol violations are
 * reported to onProtocolError and never thrown; only an unsupported media format ends the stream.
 */
export class MediaStreamInbound {
  private currentState: MediaStreamState = 'awaiting_connected';
  private currentStreamSid: string | null = null;
  private currentCallSid: string | null = null;
  private lastSequenceNumber = 0;
  private readonly payload = new InboundPayloadBuffer();

  constructor(
    private readonly handler: MediaStreamHandler,
    private readonly marks: OutstandingMarks,
    private readonly stats: MediaStreamCounters,
    private readonly outbound: MediaStreamOutbound,
  ) {}

  get state(): MediaStreamState {
    return this.currentState;
  }

  get streamSid(): string | null {
    return this.currentStreamSid;
  }

  get callSid(): string | null {
    return this.currentCallSid;
  }

  /** The socket is gone: late frames are ignored from now on. */
  transportClosed(): void {
    this.currentState = 'closed';
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
    const payload = this.payload.decode(message.media.payload);
    if (payload === null) return this.drop('invalid_media_payload', 'media.payload is not valid base64', text);
    this.stats.mediaFramesIn += 1;
    this.stats.mediaBytesIn += payload.length;
    this.handler.onMedia({
      payload,
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
