/** Twilio's CallStatus values (status callbacks and the incoming-call webhook). */
export const TWILIO_CALL_STATUSES = [
  'queued',
  'initiated',
  'ringing',
  'in-progress',
  'completed',
  'busy',
  'failed',
  'no-answer',
  'canceled',
] as const;
export type TwilioCallStatus = (typeof TWILIO_CALL_STATUSES)[number];

/** Statuses after which Twilio sends nothing more for the call. */
export const TERMINAL_CALL_STATUSES: readonly TwilioCallStatus[] = ['completed', 'busy', 'failed', 'no-answer', 'canceled'];

export function isTwilioCallStatus(value: string): value is TwilioCallStatus {
  return (TWILIO_CALL_STATUSES as readonly string[]).includes(value);
}

export function isTerminalCallStatus(value: string): boolean {
  return (TERMINAL_CALL_STATUSES as readonly string[]).includes(value);
}
