import { EngineError } from '@switchboard/inference';

/** An error as an event payload: engine errors keep their code and whether retrying may help. */
export function errorPayload(error: unknown): Record<string, unknown> {
  if (error instanceof EngineError) return { engine: error.engine, code: error.code, message: error.message, retryable: error.retryable };
  return { message: error instanceof Error ? error.message : String(error) };
}

/** A tool's arguments as recorded: parsed JSON, or the model's text as is when it is not valid JSON. */
export function parseJsonOrRaw(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
