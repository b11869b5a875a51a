import type { IncomingHttpHeaders } from 'node:http';

export type FakeTwilioOperation = 'create_call' | 'update_call' | 'fetch_call' | 'unknown';

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
}

/** One request as received, whatever was answered (401s and injected failures included). */
export interface RecordedTwilioRequest {
  operation: FakeTwilioOperation;
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The form body; a repeated key (e.g. StatusCallbackEvent) gives an array. */
  form: Record<string, string | string[]>;
  /** The AccountSid in the path, when the path has one. */
  accountSid?: string;
  callSid?: string;
  /** Whether HTTP Basic auth matched the fake's account SID and auth token. */
  authorized: boolean;
  /** HTTP status the fake answered with. */
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
 * 'server_error' a 500; or any status/code/message.
 */
export type FakeTwilioFailure = 'call_not_found' | 'server_error' | FakeTwilioError;

/** Passed to onCallUpdate after an update was applied and answered. */
export interface FakeCallUpdate {
  call: Readonly<FakeCall>;
  form: Record<string, string | string[]>;
  /** What the update did. */
  kind: 'hang_up' | 'redirect';
}
