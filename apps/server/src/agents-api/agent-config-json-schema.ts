import { AgentConfigSchema } from './documented-agent-config';
import { z } from 'zod';

/**
 * The agent config as JSON Schema (draft 2020-12), made from the same zod schema that validates a
 * saved config, so a client's form and the server cannot disagree about the fields. It describes
 * what a client writes (`io: 'input'`): every field with a default is optional and shows the
 * default. Fields carry `description` and `x-engines` (which engines read them). Refinements zod
 * cannot express (one key source per endpoint, the outbound rule, secret references) are still
 * checked at save time and reported as `problems` with their paths.
 */
let cached: Readonly<Record<string, unknown>> | undefined;

/** Computed on first use and kept: the schema is fixed for the life of the process. */
export function agentConfigJsonSchema(): Readonly<Record<string, unknown>> {
  cached ??= deepFreeze(z.toJSONSchema(AgentConfigSchema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>);
  return cached;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
