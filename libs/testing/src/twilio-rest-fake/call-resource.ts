import type { FakeCall, FakeTwilioError } from './fake-twilio-rest-types';

/** Twilio's date format in REST resources: RFC 2822 with a numeric zone, e.g. "Tue, 01 Jul 2025 10:00:00 +0000". */
export function rfc2822(date: Date): string {
  return date.toUTCString().replace(/GMT$/, '+0000');
}

function optionalDate(date: Date | null): string | null {
  return date === null ? null : rfc2822(date);
}

export function callPath(accountSid: string, callSid: string): string {
  return `/2010-04-01/Accounts/${accountSid}/Calls/${callSid}.json`;
}

/** The Call resource as Twilio's JSON API returns it (snake_case, strings for numbers, nulls for unknowns). */
export function callResource(call: FakeCall): Record<string, unknown> {
  const base = `/2010-04-01/Accounts/${call.accountSid}/Calls/${call.sid}`;
  const durationS = call.startTime !== null && call.endTime !== null ? Math.round((call.endTime.getTime() - call.startTime.getTime()) / 1000) : null;
  return {
    sid: call.sid,
    account_sid: call.accountSid,
    date_created: rfc2822(call.dateCreated),
    date_updated: rfc2822(call.dateUpdated),
    parent_call_sid: null,
    to: call.to,
    to_formatted: call.to,
    from: call.from,
    from_formatted: call.from,
    phone_number_sid: null,
    status: call.status,
    start_time: optionalDate(call.startTime),
    end_time: optionalDate(call.endTime),
    duration: durationS === null ? null : String(durationS),
    price: null,
    price_unit: 'USD',
    direction: call.direction,
    answered_by: null,
    annotation: null,
    api_version: '2010-04-01',
    forwarded_from: null,
    group_sid: null,
    caller_name: null,
    queue_time: '0',
    trunk_sid: null,
    uri: callPath(call.accountSid, call.sid),
    subresource_uris: {
      notifications: `${base}/Notifications.json`,
      recordings: `${base}/Recordings.json`,
      payments: `${base}/Payments.json`,
      events: `${base}/Events.json`,
      siprec: `${base}/Siprec.json`,
      streams: `${base}/Streams.json`,
      transcriptions: `${base}/Transcriptions.json`,
      user_defined_message_subscriptions: `${base}/UserDefinedMessageSubscriptions.json`,
      user_defined_messages: `${base}/UserDefinedMessages.json`,
    },
  };
}

/** Twilio's JSON error body, as twilio-node's RestException reads it. */
export function errorBody(error: FakeTwilioError): Record<string, unknown> {
  return { code: error.code, message: error.message, more_info: `https://www.twilio.com/docs/errors/${error.code}`, status: error.status };
}

export function notFound(path: string): FakeTwilioError {
  return { status: 404, code: 20404, message: `The requested resource ${path} was not found` };
}

export const AUTHENTICATION_ERROR: FakeTwilioError = { status: 401, code: 20003, message: 'Authenticate' };

export const INTERNAL_ERROR: FakeTwilioError = { status: 500, code: 20500, message: 'An internal server error has occurred' };
