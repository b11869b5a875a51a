/** Helpers of the tool-schema specs: compiling a schema that must compile (or be refused), and timing a run. */
import type { ArgumentValidator } from '../../../conversation/src/tools/tool-arguments';
import { compileToolSchema, type ToolSchemaProblem } from '../../../conversation/src/tools/tool-schema';

/** A schema of one string property `value` with these extra keywords. */
export function stringSchema(keywords: Record<string, unknown>): Record<string, unknown> {
  return { type: 'object', properties: { value: { type: 'string', ...keywords } } };
}

export function compiled(schema: unknown): ArgumentValidator {
  const result = compileToolSchema(schema);
  if (!result.ok) throw new Error(`expected the schema to compile: ${JSON.stringify(result.problems)}`);
  return result.validator;
}

export function refusals(schema: unknown): ToolSchemaProblem[] {
  const result = compileToolSchema(schema);
  if (result.ok) throw new Error('expected the schema to be refused');
  return result.problems;
}

export function timed<T>(run: () => T): { result: T; ms: number } {
  const started = process.hrtime.bigint();
  const result = run();
  return { result, ms: Number(process.hrtime.bigint() - started) / 1e6 };
}

/**
 * Called before feeding a catastrophic input: if patterns ever ran on JavaScript's RegExp again,
 * this fails at once instead of the next line blocking the test process for hours. `(?i)` is RE2
 * syntax that JavaScript (Node 20) refuses; `(a)\1` is a backreference only a backtracker runs.
 */
export function expectPatternsOnRe2(): void {
  expect(compiled(stringSchema({ pattern: '(?i)^abc$' })).problems({ value: 'ABC' })).toBeUndefined();
  expect(refusals(stringSchema({ pattern: '(a)\\1' }))[0]?.path).toBe('properties.value.pattern');
}

/** Generous: RE2 takes a few ms here; a backtracking engine would take hours. */
export const LINEAR_BOUND_MS = 500;
export const catastrophic = '^(a|a)*$';
