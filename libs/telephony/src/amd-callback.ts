import { z } from 'zod';

/**
 * Twilio's asynchronous answering-machine detection callback (asyncAmdStatusCallback): who picked
 * up an outbound call. AnsweredBy is one of human, machine_start, machine_end_beep,
 * machine_end_silence, machine_end_other, fax, unknown; any lower-case word is accepted so that a
 * value Twilio adds later is recorded rather than refused (Twilio would retry a refusal in vain).
 */
export const amdCallbackSchema = z
  .object({
    CallSid: z.string({ error: 'CallSid is required' }).min(1, 'CallSid must not be empty'),
    AccountSid: z.string({ error: 'AccountSid is required' }).min(1, 'AccountSid must not be empty'),
    AnsweredBy: z
      .string({ error: 'AnsweredBy is required' })
      .regex(/^[a-z][a-z_]{0,63}$/, 'AnsweredBy must be a lower-case word such as human or machine_start'),
    /** Milliseconds detection took. */
    MachineDetectionDuration: z
      .string({ error: 'MachineDetectionDuration must be a string' })
      .regex(/^\d{1,9}$/, 'MachineDetectionDuration must be a non-negative integer')
      .transform(Number)
      .optional(),
  })
  .transform((form) => ({
    callSid: form.CallSid,
    accountSid: form.AccountSid,
    answeredBy: form.AnsweredBy,
    detectionDurationMs: form.MachineDetectionDuration,
  }));
export type AmdCallbackParams = z.output<typeof amdCallbackSchema>;
