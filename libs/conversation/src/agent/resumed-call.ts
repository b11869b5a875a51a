import { WARM_TRANSFER_DEFAULTS } from '@switchboard/agent-config';
import type { AgentConfig } from '@switchboard/agent-config';
import type { ResumedCall } from './agent-session';

/** The history a model gets back after a failed warm transfer is bounded (the edge loads at most this many turns). */
export const MAX_RESUMED_TURNS = 40;

/**
 * What the agent says when it takes the caller back after a warm transfer nobody answered: the
 * destination's noAnswerMessage, else the default. Undefined when the call is not a taken-back one.
 */
export function resumeLineOf(config: AgentConfig, resumed: ResumedCall | undefined): string | undefined {
  if (resumed === undefined) return undefined;
  for (const tool of config.tools) {
    if (tool.type !== 'transfer_call') continue;
    const destination = tool.destinations.find((candidate) => candidate.number === resumed.destination);
    if (destination?.noAnswerMessage !== undefined) return destination.noAnswerMessage;
  }
  return WARM_TRANSFER_DEFAULTS.noAnswerMessage;
}

/** Puts the conversation before the transfer back into a chat history (the pipeline's LLM history). */
export function seedHistory(history: { addUser(text: string): void; addAssistant(text: string): void }, turns: ResumedCall['priorTurns'] | undefined): void {
  for (const turn of (turns ?? []).slice(-MAX_RESUMED_TURNS)) {
    if (turn.role === 'user') history.addUser(turn.text);
    else history.addAssistant(turn.text);
  }
}

/**
 * The conversation before the transfer, for a speech-to-speech model's instructions: a realtime
 * session is new on the new media stream, and its API takes earlier turns most simply as text.
 */
export function priorConversationNote(turns: ResumedCall['priorTurns'] | undefined): string {
  const lines = (turns ?? []).slice(-MAX_RESUMED_TURNS).map((turn) => `${turn.role === 'user' ? 'Caller' : 'You'}: ${turn.text}`);
  if (lines.length === 0) return '';
  return `\n\nEarlier in this call, before you tried to transfer the caller and nobody answered:\n${lines.join('\n')}`;
}
