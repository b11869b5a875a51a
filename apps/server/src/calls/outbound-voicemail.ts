import { BadRequestException } from '@nestjs/common';
import { VoicemailConfigSchema } from '@switchboard/agent-config';
import type { AgentEngine } from '@switchboard/persistence';
import type { PlaceCallBody } from './outbound-call-requests.schema';

/**
 * The voicemail an outbound call will leave when a machine answers: the call's own
 * (`voicemail: {message}`), else its agent's default (config `voicemail`); `voicemail: null` turns
 * the default off for this call. Fixed when the call is placed, like its config version.
 *
 * A voicemail needs machineDetection `DetectMessageEnd`: only then does Twilio's verdict
 * (`machine_end_beep`, `machine_end_silence`, `machine_end_other`) come after the greeting and the
 * beep. With `Enable` the verdict is `machine_start`, during the greeting, and a message said then
 * would be recorded half or not at all; with no detection there is no verdict. Rather than place a
 * call that silently never leaves its message, both are a 400 (pass `voicemail: null`, or no
 * voicemail, to place such a call with an agent that has a default). The echo agent cannot speak a
 * message, so a voicemail for it is a 400 too.
 */
export function voicemailForCall(body: PlaceCallBody, engine: AgentEngine, agentConfig: unknown): string | null {
  const message = body.voicemail === undefined ? agentDefault(agentConfig) : (body.voicemail?.message ?? null);
  if (message === null) return null;
  const from = body.voicemail === undefined ? "the agent's config (voicemail)" : 'voicemail';
  if (engine === 'echo') {
    throw voicemailRefused('voicemail_not_supported', `The echo agent cannot speak a voicemail (from ${from}); use a pipeline or realtime agent, or pass "voicemail": null.`);
  }
  if (body.machineDetection !== 'DetectMessageEnd') {
    throw voicemailRefused(
      'voicemail_needs_detect_message_end',
      `A voicemail (from ${from}) is left only on calls placed with "machineDetection": "DetectMessageEnd", whose verdict comes after the greeting and beep` +
        ` (${body.machineDetection === undefined ? 'no detection gives no verdict' : '"Enable" reports machine_start during the greeting'}). Pass "voicemail": null to place the call without one.`,
    );
  }
  return message;
}

/** The agent config's voicemail message; a stored section that no longer parses counts as none. */
function agentDefault(config: unknown): string | null {
  const section = typeof config === 'object' && config !== null ? (config as Record<string, unknown>)['voicemail'] : undefined;
  const parsed = VoicemailConfigSchema.nullable().optional().safeParse(section);
  return parsed.success ? (parsed.data?.message ?? null) : null;
}

function voicemailRefused(code: string, message: string): BadRequestException {
  return new BadRequestException({ statusCode: 400, error: 'Bad Request', code, message });
}
