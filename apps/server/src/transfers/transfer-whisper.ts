import type { StoredTurn } from '@switchboard/persistence';

/** The longest whisper read to the person who answers: about 45 seconds of Twilio <Say>. */
export const MAX_WHISPER_CHARS = 700;
/** Without the model's summary, the whisper quotes the caller's last few turns. */
const CALLER_TURNS_QUOTED = 3;

/**
 * What the person who answers a warm transfer hears before being connected: the model's summary
 * of the call (written with the transfer_call tool call, so it reflects the whole conversation),
 * or, when the model gave none, the caller's own last words from the transcript so far. Bounded,
 * and cut at a word.
 */
export function whisperText(summary: string | null, turns: readonly StoredTurn[]): string {
  const opening = 'Incoming transfer from the phone agent.';
  if (summary !== null && summary.trim().length > 0) return bounded(`${opening} ${summary.trim()}`);
  const callerWords = turns
    .filter((turn) => turn.role === 'user')
    .slice(-CALLER_TURNS_QUOTED)
    .map((turn) => turn.text.trim())
    .filter((text) => text.length > 0);
  if (callerWords.length === 0) return `${opening} No summary is available.`;
  return bounded(`${opening} The caller said: ${callerWords.join(' ... ')}`);
}

function bounded(text: string): string {
  const flat = text.replace(/\s+/g, ' ');
  if (flat.length <= MAX_WHISPER_CHARS) return flat;
  const cut = flat.slice(0, MAX_WHISPER_CHARS);
  const lastSpace = cut.lastIndexOf(' ');
  return `${lastSpace > 0 ? cut.slice(0, lastSpace) : cut}...`;
}
