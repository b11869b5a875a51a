import { z } from 'zod';

/*
 * The parts of an agent config that hand a call to someone (or something) other than the agent:
 * a voicemail left on an answering machine, and transfer destinations (cold or warm). Kept apart
 * from agent-config.schema.ts so that file stays a list of sections.
 */

/** Longest voicemail message: about two minutes of speech, well inside what voicemail systems record. */
export const MAX_VOICEMAIL_MESSAGE_CHARS = 2000;

export const voicemailMessage = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(MAX_VOICEMAIL_MESSAGE_CHARS, `at most ${MAX_VOICEMAIL_MESSAGE_CHARS} characters`);

/**
 * Voicemail drop. The default lives in the agent config, because the message belongs with the
 * agent's voice and script and every campaign call of that agent should leave it; POST /v1/calls may
 * override it for one call (or turn it off with `voicemail: null`), because the message often names
 * that callee. It is left only on outbound calls placed with machineDetection `DetectMessageEnd`:
 * the carrier then reports `machine_end_*` after the greeting and beep, the one moment a message is
 * recorded whole (`Enable` reports `machine_start` during the greeting).
 */
export const VoicemailConfigSchema = z.strictObject({
  message: voicemailMessage.describe('Said after the beep, then the agent hangs up. Variables as in firstMessage ({{call.params.NAME}}).'),
});

export const E164_PATTERN = /^\+[1-9]\d{6,14}$/;

/** Warm-transfer settings' runtime defaults (kept out of the schema so cold destinations store none of them). */
export const WARM_TRANSFER_DEFAULTS = {
  holdMessage: 'Please hold while I connect you.',
  whisper: 'summary',
  answerTimeoutS: 30,
  noAnswerMessage: "I couldn't reach anyone right now, sorry. Is there anything else I can help you with?",
} as const;

/** The fields only a warm transfer reads; a cold destination that sets one is refused (it would be silently ignored). */
const WARM_ONLY_FIELDS = ['holdMessage', 'holdMusicUrl', 'whisper', 'answerTimeoutS', 'noAnswerMessage'] as const;

export const TransferDestinationSchema = z
  .strictObject({
    number: z.string().regex(E164_PATTERN, 'must be an E.164 number'),
    label: z.string().min(1).optional(),
    // No default written into the stored config: a destination without a mode stays what it always was (cold).
    mode: z
      .enum(['cold', 'warm'])
      .optional()
      .describe("'cold' (default): the caller is connected straight to the number and the agent leaves. 'warm': the caller waits on hold while the number is called and told what the call is about; the agent comes back if nobody answers."),
    holdMessage: z.string().trim().min(1).max(500).optional().describe(`Warm: said before the caller is put on hold (default "${WARM_TRANSFER_DEFAULTS.holdMessage}").`),
    holdMusicUrl: z
      .url({ protocol: /^https$/, error: 'must be an https URL' })
      .max(2000)
      // Documented by the server (agents-api/documented-agent-config.ts): what the carrier does with it.
      .optional(),
    whisper: z
      .enum(['summary', 'none'])
      // Documented by the server (agents-api/documented-agent-config.ts): how the carrier says it.
      .optional(),
    answerTimeoutS: z
      .number()
      .int()
      .min(5)
      .max(120)
      .optional()
      .describe(`Warm: how long the number may ring before the agent takes the caller back (default ${WARM_TRANSFER_DEFAULTS.answerTimeoutS}).`),
    noAnswerMessage: z
      .string()
      .trim()
      .min(1)
      .max(500)
      .optional()
      .describe(`Warm: what the agent says when it takes the caller back (default "${WARM_TRANSFER_DEFAULTS.noAnswerMessage}").`),
  })
  .superRefine((destination, ctx) => {
    if (destination.mode === 'warm') return;
    // Cold: a warm-only setting would be silently ignored, so it is refused where it was written.
    for (const field of WARM_ONLY_FIELDS) {
      if (destination[field] !== undefined) ctx.addIssue({ code: 'custom', path: [field], message: `${field} applies to warm transfers only (set mode: "warm")` });
    }
  });

export type TransferDestination = z.output<typeof TransferDestinationSchema>;
