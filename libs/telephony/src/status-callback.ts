import { z } from 'zod';

/**
 * Twilio's HTTP form posts for a call: the voice webhook (a call arrives) and call status callbacks.
 * Schemas validate the raw PascalCase form fields (errors name them, as Twilio spells them) and
 * output camelCase typed values.
 */

export const CALL_STATUSES = [
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
export type CallStatus = (typeof CALL_STATUSES)[number];

/** Statuses after which Twilio sends nothing more for the call. */
export const TERMINAL_CALL_STATUSES = ['completed', 'busy', 'failed', 'no-answer', 'canceled'] as const satisfies readonly CallStatus[];
const TERMINAL_STATUS_SET: ReadonlySet<string> = new Set<string>(TERMINAL_CALL_STATUSES);

export function isCallStatus(value: string): value is CallStatus {
  return (CALL_STATUSES as readonly string[]).includes(value);
}

/** A terminal status is final: later callbacks cannot move the call out of it. */
export function isTerminalCallStatus(status: string): status is (typeof TERMINAL_CALL_STATUSES)[number] {
  return TERMINAL_STATUS_SET.has(status);
}

function requiredString(field: string) {
  return z
    .string({ error: (issue) => (issue.input === undefined ? `${field} is required` : `${field} must be a string`) })
    .min(1, `${field} must not be empty`);
}

function optionalCount(field: string) {
  return z
    .string({ error: `${field} must be a string` })
    .regex(/^\d{1,15}$/, `${field} must be a non-negative integer`)
    .transform(Number)
    .optional();
}

function callStatus(field: string) {
  return z.enum(CALL_STATUSES, {
    error: (issue) => (issue.input === undefined ? `${field} is required` : `${field} must be one of ${CALL_STATUSES.join(', ')}`),
  });
}

export const statusCallbackSchema = z
  .object({
    CallSid: requiredString('CallSid'),
    AccountSid: requiredString('AccountSid'),
    CallStatus: callStatus('CallStatus'),
    /** Orders callbacks for one call; they may arrive out of order. */
    SequenceNumber: optionalCount('SequenceNumber'),
    /** Seconds the call lasted; terminal statuses only. */
    CallDuration: optionalCount('CallDuration'),
    /** Billed minutes, rounded up; terminal statuses only. */
    Duration: optionalCount('Duration'),
    /** RFC 2822, e.g. "Tue, 08 Sep 2020 20:04:41 +0000". */
    Timestamp: z
      .string({ error: 'Timestamp must be a string' })
      .refine((value) => !Number.isNaN(Date.parse(value)), 'Timestamp must be a date (RFC 2822)')
      .transform((value) => new Date(value))
      .optional(),
  })
  .transform((form) => ({
    callSid: form.CallSid,
    accountSid: form.AccountSid,
    status: form.CallStatus,
    sequenceNumber: form.SequenceNumber,
    callDurationSeconds: form.CallDuration,
    billedMinutes: form.Duration,
    timestamp: form.Timestamp,
  }));
export type StatusCallbackParams = z.output<typeof statusCallbackSchema>;

export const voiceWebhookSchema = z
  .object({
    CallSid: requiredString('CallSid'),
    AccountSid: requiredString('AccountSid'),
    // Withheld caller IDs arrive as e.g. "anonymous"; any present string is accepted.
    From: z.string({ error: (issue) => (issue.input === undefined ? 'From is required' : 'From must be a string') }),
    To: requiredString('To'),
    /** inbound, outbound-api, outbound-dial, ... kept open so a new value does not refuse a call. */
    Direction: requiredString('Direction'),
    CallStatus: callStatus('CallStatus'),
  })
  .transform((form) => ({
    callSid: form.CallSid,
    accountSid: form.AccountSid,
    from: form.From,
    to: form.To,
    direction: form.Direction,
    callStatus: form.CallStatus,
  }));
export type VoiceWebhookParams = z.output<typeof voiceWebhookSchema>;

export interface FormFieldError {
  code: 'invalid_form';
  /** The Twilio form field name, e.g. "CallSid"; empty when the body itself is not a form object. */
  field: string;
  message: string;
}

export type FormParseResult<T> = { ok: true; value: T } | { ok: false; error: FormFieldError };

function parseForm<T>(schema: z.ZodType<T>, params: unknown): FormParseResult<T> {
  const parsed = schema.safeParse(params);
  if (parsed.success) return { ok: true, value: parsed.data };
  const issue = parsed.error.issues[0];
  return {
    ok: false,
    error: { code: 'invalid_form', field: issue ? issue.path.join('.') : '', message: issue?.message ?? 'invalid form' },
  };
}

/** Status callback form -> typed value, or the first offending field. Never throws. */
export function parseStatusCallback(params: unknown): FormParseResult<StatusCallbackParams> {
  return parseForm(statusCallbackSchema, params);
}

/** Voice webhook form -> typed value, or the first offending field. Never throws. */
export function parseVoiceWebhook(params: unknown): FormParseResult<VoiceWebhookParams> {
  return parseForm(voiceWebhookSchema, params);
}
