/** The identities one simulated call carries through every request Twilio makes for it. */
export interface CallParties {
  accountSid: string;
  callSid: string;
  /** E.164 caller number. */
  from: string;
  /** E.164 number that was dialled (the agent's number). */
  to: string;
}

/**
 * What Twilio POSTs to a number's voice URL for an inbound call. The geographic fields are fixed,
 * plausible values: servers must not depend on them, but they must cope with them being signed.
 */
export function voiceWebhookParams(
  parties: CallParties,
  extraParams: Readonly<Record<string, string>> = {},
): Record<string, string> {
  return {
    AccountSid: parties.accountSid,
    ApiVersion: '2010-04-01',
    CallSid: parties.callSid,
    CallStatus: 'ringing',
    Called: parties.to,
    CalledCity: 'SAN FRANCISCO',
    CalledCountry: 'US',
    CalledState: 'CA',
    CalledZip: '94105',
    Caller: parties.from,
    CallerCity: 'OAKLAND',
    CallerCountry: 'US',
    CallerState: 'CA',
    CallerZip: '94612',
    Direction: 'inbound',
    From: parties.from,
    FromCity: 'OAKLAND',
    FromCountry: 'US',
    FromState: 'CA',
    FromZip: '94612',
    To: parties.to,
    ToCity: 'SAN FRANCISCO',
    ToCountry: 'US',
    ToState: 'CA',
    ToZip: '94105',
    ...extraParams,
  };
}

export type CallStatus =
  | 'queued'
  | 'initiated'
  | 'ringing'
  | 'in-progress'
  | 'completed'
  | 'busy'
  | 'failed'
  | 'no-answer'
  | 'canceled';

export interface StatusCallbackEvent {
  callStatus: CallStatus;
  /** Twilio numbers a call's callbacks from 0; they may arrive out of order. */
  sequenceNumber: number;
  /** Whole seconds the call lasted; Twilio adds it (and Duration) on terminal events only. */
  callDurationSec?: number;
  at: Date;
}

const TERMINAL_STATUSES: ReadonlySet<CallStatus> = new Set(['completed', 'busy', 'failed', 'no-answer', 'canceled']);

export function statusCallbackParams(parties: CallParties, event: StatusCallbackEvent): Record<string, string> {
  const params: Record<string, string> = {
    AccountSid: parties.accountSid,
    ApiVersion: '2010-04-01',
    CallSid: parties.callSid,
    CallStatus: event.callStatus,
    CallbackSource: 'call-progress-events',
    Called: parties.to,
    Caller: parties.from,
    Direction: 'inbound',
    From: parties.from,
    To: parties.to,
    SequenceNumber: String(event.sequenceNumber),
    // RFC 2822 with a numeric zone, as Twilio formats it.
    Timestamp: event.at.toUTCString().replace('GMT', '+0000'),
  };
  if (TERMINAL_STATUSES.has(event.callStatus)) {
    // Whole seconds, rounded up here so that a connected call never reports 0 (servers must not
    // rely on the rounding either way).
    const seconds = Math.max(0, Math.ceil(event.callDurationSec ?? 0));
    params['CallDuration'] = String(seconds);
    // Billed minutes: Twilio rounds every call leg up to the whole minute.
    params['Duration'] = String(Math.ceil(seconds / 60));
  }
  return params;
}
