import type { ToolDefinition } from '@switchboard/inference';
import type { WarmTransferPlan } from '../call/call-control';
import type { EndCallToolConfig, TransferCallToolConfig } from '@switchboard/agent-config';
import { WARM_TRANSFER_DEFAULTS, type TransferDestination } from '@switchboard/agent-config';
import { parseToolArguments } from './tool-arguments';
import type { ToolInvocation, ToolOutcome } from './tool-contracts';
import { excerpt, failed, succeeded } from './tool-outcome';

/** The tools the runtime answers itself (no network): they change the call rather than fetch data. */
export interface BuiltInTool {
  readonly name: string;
  readonly definition: ToolDefinition;
  run(invocation: ToolInvocation): ToolOutcome;
}

export const END_CALL_TOOL_NAME = 'end_call';
export const TRANSFER_CALL_TOOL_NAME = 'transfer_call';

const END_CALL_DESCRIPTION =
  'Hang up the phone call. Use it only when the conversation is clearly over: the caller said goodbye, ' +
  'confirmed they need nothing else, or asked to end the call. Say your closing words before calling it.';

export function endCallTool(config: EndCallToolConfig): BuiltInTool {
  return {
    name: END_CALL_TOOL_NAME,
    definition: {
      name: END_CALL_TOOL_NAME,
      description: config.description ?? END_CALL_DESCRIPTION,
      parameters: {
        type: 'object',
        properties: { reason: { type: 'string', description: 'Why the call is ending, in a few words (for the call record).' } },
        additionalProperties: false,
      },
    },
    run(invocation) {
      // The intent to hang up is clear from the call itself; unreadable arguments only lose the reason.
      const parsed = parseToolArguments(invocation.arguments);
      const reason = parsed.ok && typeof parsed.value.reason === 'string' ? parsed.value.reason : undefined;
      return succeeded({ ending: true, ...(reason !== undefined && { reason }) }, { type: 'end_call', goodbye: config.goodbye });
    },
  };
}

function destinationList(config: TransferCallToolConfig): string {
  return config.destinations.map((d) => (d.label === undefined ? d.number : `${d.number} (${d.label})`)).join(', ');
}

/** The longest summary a warm transfer's whisper carries (the carrier reads it aloud to the person who answers). */
export const MAX_TRANSFER_SUMMARY_CHARS = 600;

const SUMMARY_PARAMETER = {
  type: 'string',
  maxLength: MAX_TRANSFER_SUMMARY_CHARS,
  description: 'For a warm transfer: one or two sentences for the person taking the call (who is calling, what they need, what was done so far).',
};

export function transferCallTool(config: TransferCallToolConfig): BuiltInTool {
  const numbers = config.destinations.map((d) => d.number);
  const listed = destinationList(config);
  // The model writes the summary only where some destination is warm: a cold transfer has nobody to tell.
  const anyWarm = config.destinations.some((d) => d.mode === 'warm');
  const description =
    config.description ??
    'Transfer the caller to a person or another department. Use it when the caller asks for a human, or when ' +
      'their request is one you cannot handle and one of the destinations fits it. Tell the caller you are ' +
      'transferring them before calling it.';
  return {
    name: TRANSFER_CALL_TOOL_NAME,
    definition: {
      name: TRANSFER_CALL_TOOL_NAME,
      description: `${description} Destinations: ${listed}.`,
      parameters: {
        type: 'object',
        properties: {
          destination: { type: 'string', enum: numbers, description: `The number to transfer to, one of: ${listed}.` },
          ...(anyWarm && { summary: SUMMARY_PARAMETER }),
        },
        required: ['destination'],
        additionalProperties: false,
      },
    },
    run(invocation) {
      const parsed = parseToolArguments(invocation.arguments);
      if (!parsed.ok) return failed(parsed.error);
      const destination = parsed.value.destination;
      if (typeof destination !== 'string') return failed(`"destination" is required: one of ${listed}`);
      // Only configured numbers: the model must never be talked into dialling a number the caller names.
      const chosen = config.destinations.find((d) => d.number === destination);
      if (chosen === undefined) return failed(`"${excerpt(destination, 40)}" is not an allowed destination; use one of ${listed}`);
      if (chosen.mode !== 'warm') return succeeded({ transferring: true, to: destination }, { type: 'transfer', to: destination, message: config.message });
      return succeeded(
        { transferring: true, to: destination, mode: 'warm' },
        { type: 'transfer', to: destination, message: chosen.holdMessage ?? WARM_TRANSFER_DEFAULTS.holdMessage, warm: warmPlanOf(chosen, parsed.value.summary) },
      );
    },
  };
}

function warmPlanOf(destination: TransferDestination, summary: unknown): WarmTransferPlan {
  // Bounded here whatever the model wrote (the schema's maxLength is advice to the model, not enforced on it).
  const text = typeof summary === 'string' ? summary.replace(/\s+/g, ' ').trim().slice(0, MAX_TRANSFER_SUMMARY_CHARS) : '';
  return {
    ...(destination.holdMusicUrl !== undefined && { holdMusicUrl: destination.holdMusicUrl }),
    whisper: destination.whisper ?? WARM_TRANSFER_DEFAULTS.whisper,
    answerTimeoutS: destination.answerTimeoutS ?? WARM_TRANSFER_DEFAULTS.answerTimeoutS,
    ...(text.length > 0 && { summary: text }),
  };
}
