import type { ErrorObject, ValidateFunction } from 'ajv';
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
 * What validating against a schema can cost, from the schema once every `$ref` is followed. JSON
 * Schema work is a product: each argument value may meet every schema node (an `anyOf` of 900
 * branches under `items` against 16 000 numbers took 15 s of event loop), and each character may
 * meet every pattern's RE2 program. The schema is bounded at save; these bound the product per call.
 */
export interface ValidationCost {
  /** JSON values in the expanded schema. */
  schemaNodes: number;
  /** RE2 program size summed over the patterns in the expanded schema. */
  regexProgramSize: number;
}

/** Argument values x schema nodes: about 0.5 us each at worst (error objects), so ~100 ms. */
export const MAX_VALIDATION_STEPS = 250_000;
/** Argument characters x RE2 instructions: about 25 ns each at worst (RE2JS falling back to its NFA), so ~100 ms. */
export const MAX_REGEX_STEPS = 4_000_000;

/** JSON values, and characters of strings and property names (patterns read both), in `value`. */
function measure(value: unknown): { values: number; chars: number } {
  let values = 0;
  let chars = 0;
  const stack = [value];
  while (stack.length > 0) {
    const item = stack.pop();
    values += 1;
    if (typeof item === 'string') chars += item.length;
    else if (Array.isArray(item)) for (const child of item as unknown[]) stack.push(child);
    else if (typeof item === 'object' && item !== null) {
      for (const [key, child] of Object.entries(item)) {
        chars += key.length;
        stack.push(child);
      }
    }
  }
  return { values, chars };
}

/**
 * A tool's `parameters` JSON Schema, compiled once (at save, then once per agent config version),
 * then used for every call. Built only by compileToolSchema (tool-schema.ts), which refuses schemas
 * that could freeze the process and gives each validator its own Ajv instance: schemas come from
 * tenants, so one tool's `$id` must not collide with another's.
 */
export class ArgumentValidator {
  constructor(
    private readonly check: ValidateFunction,
    private readonly cost: ValidationCost,
  ) {}

  /** Refuses, unvalidated, arguments whose validation could stall the process (see ValidationCost). */
  private tooLarge(value: unknown): string | undefined {
    const { values, chars } = measure(value);
    const nodes = Math.max(1, this.cost.schemaNodes);
    if (values * nodes > MAX_VALIDATION_STEPS) {
      return `arguments are too large for this tool: ${values} JSON values; its parameters schema accepts at most ${Math.floor(MAX_VALIDATION_STEPS / nodes)}`;
    }
    if (chars * this.cost.regexProgramSize > MAX_REGEX_STEPS) {
      const most = Math.floor(MAX_REGEX_STEPS / this.cost.regexProgramSize);
      return `arguments are too large for this tool: ${chars} characters of text; its parameters schema accepts at most ${most}`;
    }
    return undefined;
  }

  /** undefined when valid; otherwise the failing paths, for the model to correct its call. */
  problems(value: unknown): string | undefined {
    const tooLarge = this.tooLarge(value);
    if (tooLarge !== undefined) return tooLarge;
    if (this.check(value)) return undefined;
    const problems = (this.check.errors ?? []).map(describeProblem);
    const listed = problems.slice(0, MAX_LISTED_PROBLEMS).join('; ');
    const more = problems.length > MAX_LISTED_PROBLEMS ? ` (and ${problems.length - MAX_LISTED_PROBLEMS} more)` : '';
    return `arguments do not match the tool's parameters: ${listed}${more}`;
  }
}
