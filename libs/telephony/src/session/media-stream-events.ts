import type { InboundParseErrorCode, MediaFormat } from '../messages/inbound-messages';

export interface StreamStartedEvent {
  streamSid: string;
  callSid: string;
  accountSid: string;
  /** The TwiML <Parameter>s. May hold the stream token: never log this object as a whole. */
  customParameters: Record<string, string>;
  mediaFormat: MediaFormat;
  tracks: string[];
  sequenceNumber: number;
}

export interface MediaFrameEvent {
  /**
   * Decoded mu-law bytes. A view into a buffer the session reuses for the next frame: copy it
   * (or finish with it) before the callback returns. A plain Uint8Array, so slice() copies.
   */
  payload: Uint8Array;
  /** Milliseconds since the stream started, as stamped by Twilio. */
  timestampMs: number;
  /** Media chunk counter; 1 for the first frame. */
  chunk: number;
  sequenceNumber: number;
  track: string;
}

export interface DtmfEvent {
  digit: string;
  sequenceNumber: number;
}

export interface MarkEchoEvent {
  name: string;
  /**
   * True when the mark was still outstanding when clear() was sent: its audio was probably
   * discarded rather than played (or it finished just as the clear went out).
   */
  wasCleared: boolean;
  /**
   * Present (true) for a mark the agent placed that a clear discarded while it still waited for its
   * frame: Twilio never saw it, the session reports it as cleared itself, after every older mark's
   * echo. `sequenceNumber` is then that of the last message received.
   */
  neverSent?: true;
  sequenceNumber: number;
}

export interface StreamStoppedEvent {
  accountSid: string | undefined;
  callSid: string | undefined;
  sequenceNumber: number;
}

export type ProtocolErrorCode =
  | InboundParseErrorCode
  | 'missing_connected'
  | 'duplicate_connected'
  | 'duplicate_start'
  | 'message_before_start'
  | 'message_after_stop'
  | 'stream_sid_mismatch'
  | 'sequence_gap'
  | 'sequence_out_of_order'
  | 'unsupported_media_format'
  | 'invalid_media_payload'
  | 'unknown_mark'
  | 'mark_out_of_order';

export interface ProtocolErrorEvent {
  code: ProtocolErrorCode;
  message: string;
  /** The start of the offending frame, with custom parameters (which carry the token) redacted. */
  rawExcerpt: string;
  /**
   * True only when the stream cannot continue (unsupported media format): the runtime should hang
   * up. Every other protocol error is reported and the session carries on.
   */
  fatal: boolean;
}

/** What the runtime implements to hear about one media stream. Called synchronously from receive(). */
export interface MediaStreamHandler {
  onStart(event: StreamStartedEvent): void;
  onMedia(event: MediaFrameEvent): void;
  onDtmf(event: DtmfEvent): void;
  onMark(event: MarkEchoEvent): void;
  onStop(event: StreamStoppedEvent): void;
  onProtocolError(event: ProtocolErrorEvent): void;
}

/** Where outbound messages go (the socket). */
export interface MediaStreamTransport {
  send(text: string): void;
}

export type MediaStreamState =
  | 'awaiting_connected'
  | 'awaiting_start'
  | 'streaming'
  | 'stopped'
  /** A fatal protocol error was reported; everything further is ignored. */
  | 'failed'
  /** markTransportClosed() was called; nothing can be sent. */
  | 'closed';

export interface MediaStreamCounters {
  messagesIn: number;
  mediaFramesIn: number;
  mediaBytesIn: number;
  mediaFramesOut: number;
  mediaBytesOut: number;
  /** Silence added by endOfUtterance() to complete the last partial frame of an utterance. */
  paddingBytesOut: number;
  /**
   * Outbound media bytes confirmed played: those sent before the latest mark Twilio echoed as played
   * (not cleared). Audio cut off by a barge-in, or still queued at hang-up, is not counted.
   */
  mediaBytesHeard: number;
  marksSent: number;
  marksEchoed: number;
  /** Marks a clear discarded while they waited for their frame (never sent, reported as cleared). */
  marksNeverSent: number;
  clearsSent: number;
  protocolErrors: number;
  /** Times the sequence jumped forward; `missingMessages` sums the size of the jumps. */
  sequenceGaps: number;
  missingMessages: number;
  /** Messages whose sequence number was not above the last one seen (replays, duplicates). */
  sequenceDuplicates: number;
  /** Inbound messages not delivered to the handler (invalid, out of order, wrong state). */
  messagesDropped: number;
  /** Outbound calls refused because the stream was not started, already stopped or closed. */
  sendsRefused: number;
}
