import { voicemailMessage } from '@switchboard/agent-config';
import { isE164, MACHINE_DETECTION_MODES } from '@switchboard/persistence';
import { z } from 'zod';
import { createApiDto } from '../openapi/api-schemas';

export const MAX_CALL_VARIABLES = 50;
export const MAX_CALL_VARIABLE_NAME_CHARS = 64;
export const MAX_CALL_VARIABLE_VALUE_CHARS = 1_000;

const e164 = z.string().refine(isE164, { message: 'must be an E.164 number, e.g. +14155550100' });

/** Names usable in a prompt as {{call.params.NAME}} (the placeholder syntax allows these characters). */
const variableName = z
  .string()
  .regex(/^[A-Za-z0-9_.-]+$/, 'variable names may use letters, digits, _ . and -')
  .max(MAX_CALL_VARIABLE_NAME_CHARS);

/** POST /v1/calls: place an outbound call from one of the organization's numbers, run by one of its agents. */
export const placeCallBody = z.strictObject({
  agentId: z.guid(),
  to: e164,
  /** One of the organization's numbers (POST /v1/phone-numbers). */
  from: e164,
  /** Visible to the agent's prompts as {{call.params.NAME}}. */
  variables: z
    .record(variableName, z.string().max(MAX_CALL_VARIABLE_VALUE_CHARS))
    .refine((record) => Object.keys(record).length <= MAX_CALL_VARIABLES, { message: `at most ${MAX_CALL_VARIABLES} variables` })
    .default({}),
  /** Twilio answering-machine detection, asynchronous: the agent starts at once and the verdict follows. */
  machineDetection: z.enum(MACHINE_DETECTION_MODES).optional(),
  /**
   * Left when a machine answers (needs machineDetection DetectMessageEnd): overrides the agent
   * config's `voicemail` for this call; null leaves none even when the agent has a default.
   */
  voicemail: z
    .strictObject({ message: voicemailMessage.describe('Said after the beep, then the agent hangs up (1 to 2000 characters; {{call.params.NAME}} works).') })
    .nullable()
    .optional()
    .describe("Voicemail drop: needs machineDetection DetectMessageEnd. Overrides the agent config's voicemail; null: none on this call."),
});
export type PlaceCallBody = z.infer<typeof placeCallBody>;

export const callIdParam = z.string().min(1).max(64);

export class PlaceCallBodyDto extends createApiDto(placeCallBody) {}
