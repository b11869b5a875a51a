import type { ToolAction, ToolOutcome } from './tool-contracts';

/**
 * The two shapes every tool answers the model with, so the model always sees `{"result": ...}` or
 * `{"error": "..."}` whichever tool ran.
 */

const NO_ACTION: ToolAction = { type: 'none' };

export function succeeded(result: unknown, action: ToolAction = NO_ACTION): ToolOutcome {
  // undefined would vanish from the JSON and leave the model with `{}`: say "no result" explicitly.
  const recorded = result === undefined ? null : result;
  return { content: JSON.stringify({ result: recorded }), result: recorded, action };
}

/** A failure the model can react to (apologise, ask again, try another tool); no action is taken. */
export function failed(error: string): ToolOutcome {
  return { content: JSON.stringify({ error }), error, action: NO_ACTION };
}

/** A bounded, single-line excerpt of text from elsewhere (a response body), for an error message. */
export function excerpt(text: string, maxChars: number): string {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length > maxChars ? `${oneLine.slice(0, maxChars)}...` : oneLine;
}
