import type { MarkEcho } from './playback-buffer';
import type { TwimlStream } from './twiml-parser';
import type { SignatureMode } from './twilio-signature';
import type { ServerStreamMessage } from './twilio-stream-messages';

export interface SimulatedTwilioCallOptions {
  /** Where the server actually listens, e.g. http://127.0.0.1:3000. */
  serverUrl: string;
  /** PUBLIC_BASE_URL as configured in Twilio (what signatures cover); defaults to serverUrl. */
  publicBaseUrl?: string;
  authToken: string;
  /** Defaults to a fresh AC sid. */
  accountSid?: string;
  from: string;
  to: string;
  /** Defaults to a fresh CA sid; pass one to replay a call. */
  callSid?: string;
  voicePath?: string;
  statusCallbackPath?: string;
  /** Added to (or overriding) the voice webhook's parameters. */
  extraVoiceParams?: Record<string, string>;
  requestTimeoutMs?: number;
  /** Send silence frames between utterances, as a real line does (default true). */
  idleSilence?: boolean;
}

export interface ConnectMediaOptions {
  /** The stream to open; defaults to the one from dial(). Pass another call's to replay its token. */
  stream?: TwimlStream;
  /** Overrides the customParameters sent in `start` (defaults to the stream's <Parameter>s). */
  customParameters?: Record<string, string>;
  signature?: SignatureMode;
  timeoutMs?: number;
}

export interface CloseInfo {
  code: number;
  reason: string;
  /** Who ended the socket: `caller` (hangup/drop here) or `server`. */
  closedBy: 'caller' | 'server';
}

/** Typed events: 'message' (ServerStreamMessage), 'protocolError' (string), 'markEchoed' (MarkEcho), 'close' (CloseInfo). */
export interface SimulatedTwilioCallEvents {
  message: [ServerStreamMessage];
  protocolError: [string];
  markEchoed: [MarkEcho];
  close: [CloseInfo];
}
