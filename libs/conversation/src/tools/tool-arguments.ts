import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { JsonSchema } from '@switchboard/inference/llm';
import { excerpt } from './tool-outcome';

/** Model-written arguments longer than this are refused unread: no sensible tool call needs more. */
export const MAX_ARGUMENTS_CHARS = 32 * 1024;
const MAX_LISTED_PROBLEMS = 8;

export type ParsedArguments = { ok: true; value: Record<string, unknown> } | { ok: false; error: string };

/**
 * The model's argument text as a JSON object. Blank text counts as `{}`: several models send ""
 * for a tool without parameters.
 */
export function parseToolArguments(text: string): ParsedArguments {
  if (text.length > MAX_ARGUMENTS_CHARS) {
    return { ok: false, error: `arguments are ${text.length} characters long; at most ${MAX_ARGUMENTS_CHARS} are accepted` };
  }
  if (text.trim().length === 0) return { ok: true, value: {} };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, error: `arguments are not valid JSON (${(error as Error).message}): ${excerpt(text, 120)}` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, error: 'arguments must be a JSON object' };
  }
  return { ok: true, value: value as Record<string, unknown> };
}

function describeProblem(problem: ErrorObject): string {
  const at = problem.instancePath;
  switch (problem.keyword) {
    case 'required':
      return `${at}/${String(problem.params.missingProperty)}: is required`;
    case 'additionalProperties':
      return `${at}/${String(problem.params.additionalProperty)}: is not an allowed property`;
    case 'enum':
      return `${at || '(arguments)'}: must be one of ${JSON.stringify(problem.params.allowedValues)}`;
    default:
      return `${at || '(arguments)'}: ${problem.message ?? `fails "${problem.keyword}"`}`;
  }
}

/**
 * A tool's `parameters` JSON Schema, compiled once (when the tool is built), then used for every
 * call. Each validator has its own Ajv instance: schemas come from tenants, so one tool's `$id`
 * must not collide with another's, and nothing is cached beyond the tool's lifetime.
 */
export class ArgumentValidator {
  private constructor(private readonly check: ValidateFunction) {}

  /** Throws (naming the tool) when `schema` is not a valid JSON Schema. */
  static compile(toolName: string, schema: JsonSchema): ArgumentValidator {
    // strictSchema off: schemas written for OpenAI carry keywords Ajv does not know (ignored, not
    // fatal); unknown formats are likewise ignored. logger off: no console noise per tenant schema.
    const ajv = new Ajv({ allErrors: true, strictSchema: false, logger: false });
    addFormats(ajv);
    try {
      return new ArgumentValidator(ajv.compile(schema));
    } catch (error) {
      throw new Error(`tool "${toolName}": parameters is not a usable JSON Schema: ${(error as Error).message}`);
    }
  }

  /** undefined when valid; otherwise the failing paths, for the model to correct its call. */
  problems(value: unknown): string | undefined {
    if (this.check(value)) return undefined;
    const problems = (this.check.errors ?? []).map(describeProblem);
    const listed = problems.slice(0, MAX_LISTED_PROBLEMS).join('; ');
    const more = problems.length > MAX_LISTED_PROBLEMS ? ` (and ${problems.length - MAX_LISTED_PROBLEMS} more)` : '';
    return `arguments do not match the tool's parameters: ${listed}${more}`;
  }
}
