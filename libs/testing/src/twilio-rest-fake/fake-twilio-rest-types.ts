import type { IncomingHttpHeaders } from 'node:http';

export type FakeTwilioOperation =
  | 'create_call'
  | 'update_call'
  | 'fetch_call'
  | 'list_incoming_numbers'
  | 'fetch_incoming_number'
  | 'fetch_account'
  | 'unknown';

/** The operations failNext can make fail. */
export type FakeTwilioFailableOperation = Exclude<FakeTwilioOperation, 'unknown'>;

/** One Twilio account the fake serves: requests on its path must authenticate with its SID and token. */
export interface FakeAccount {
  sid: string;
  authToken: string;
  friendlyName: string;
  dateCreated: Date;
}

/** A phone number owned by an account (Twilio's IncomingPhoneNumber resource). */
export interface FakeIncomingNumber {
  /** PN + 32 hex digits. */
  sid: string;
  accountSid: string;
  /** E.164, e.g. +15550001111. */
  phoneNumber: string;
  friendlyName: string;
  voiceUrl?: string;
  voiceMethod: string;
  statusCallback?: string;
  smsUrl?: string;
  dateCreated: Date;
  dateUpdated: Date;
}

/** What a test may decide about a number it registers; the rest is filled in. */
export interface FakeIncomingNumberOptions {
  sid?: string;
  /** Default: Twilio's display form, "(555) 000-1111" for a +1 number, else the E.164 number. */
  friendlyName?: string;
  voiceUrl?: string;
  /** Default 'POST'. */
  voiceMethod?: string;
  statusCallback?: string;
  smsUrl?: string;
}

/** Twilio's call states (the subset a call passes through). */
export type FakeCallStatus = 'queued' | 'ringing' | 'in-progress' | 'completed' | 'canceled' | 'busy' | 'no-answer' | 'failed';

/** What the fake knows about one call. */
export interface FakeCall {
  sid: string;
  accountSid: string;
  from: string;
  to: string;
  status: FakeCallStatus;
  direction: 'inbound' | 'outbound-api';
  dateCreated: Date;
  dateUpdated: Date;
  startTime: Date | null;
  endTime: Date | null;
  /** The TwiML URL from create or the latest redirect. */
  url?: string;
  /** Inline TwiML from create or the latest update (a transfer puts its <Dial> here). */
  twiml?: string;
  statusCallback?: string;
  statusCallbackEvents: string[];
  machineDetection?: string;
  /** calls.create Timeout: seconds the destination may ring (the fake records it; tests end the ringing). */
  timeout?: number;
  /** Every <Say> the call's TwiML spoke to it, in order (a warm transfer's whisper). */
  said: string[];
}

/** One request as received, whatever was answered (401s and injected failures included). */
export interface RecordedTwilioRequest {
  operation: FakeTwilioOperation;
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The form body; a repeated key (e.g. StatusCallbackEvent) gives an array. */
  form: Record<string, string | string[]>;
  /** The query string; a repeated key gives an array. */
  query: Record<string, string | string[]>;
  /** The AccountSid in the path, when the path has one. */
  accountSid?: string;
  callSid?: string;
  /** The PN sid of an IncomingPhoneNumbers/{Sid}.json request. */
  phoneNumberSid?: string;
  /**
   * Whether HTTP Basic auth matched the SID and token of the account in the path (for a path with no
   * account: of any account the fake knows).
   */
  authorized: boolean;
  /** HTTP status the fake answered with; 0 when an injected 'connection_reset' dropped the connection. */
  status: number;
}

/** A Twilio REST error, answered with Twilio's JSON error body. */
export interface FakeTwilioError {
  status: number;
  code: number;
  message: string;
}

/**
 * Injected failures: 'call_not_found' is Twilio's answer for a call that is over (404, code 20404);
 * 'not_found' the same 404 under a name that fits other resources; 'server_error' a 500;
 * 'connection_reset' drops the connection without an answer (a network failure); or any
 * status/code/message.
 */
export type FakeTwilioFailure = 'call_not_found' | 'not_found' | 'server_error' | 'connection_reset' | FakeTwilioError;

/** Passed to onCallUpdate after an update was applied and answered. */
export interface FakeCallUpdate {
  call: Readonly<FakeCall>;
  form: Record<string, string | string[]>;
  /** What the update did. */
  kind: 'hang_up' | 'redirect';
}
