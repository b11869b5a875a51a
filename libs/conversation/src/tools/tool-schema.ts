import Ajv, { type Options } from 'ajv';
import { re2RegExp } from './re2-regexp';
import { ArgumentValidator } from './tool-arguments';
import { excerpt } from './tool-outcome';
import { SAFE_FORMATS } from './tool-schema-formats';
import { DRAFT_07, MAX_EXPANDED_NODES, MAX_REGEX_PROGRAM_SIZE, type ToolSchemaProblem } from './tool-schema-limits';
import { checkBounds, isObject, metaSchemaProblems, ProblemList, SchemaWalk } from './tool-schema-walk';

export * from './tool-schema-limits';
export { re2RegExp } from './re2-regexp';
export { ToolSchemaCache, DEFAULT_TOOL_SCHEMA_CACHE_ENTRIES } from './tool-schema-cache';

/**
 * Tenant-written tool `parameters` schemas, checked when saved and compiled once per agent config
 * version. A schema is tenant code that runs on the event loop shared by every tenant's calls, so
 * whatever it may make Ajv do must stay bounded: regular expressions run on RE2 (linear time,
 * never backtracking, re2-regexp.ts), formats are a safe list (tool-schema-formats.ts), and the
 * schema's own size, nesting and fan-out are capped (tool-schema-limits.ts, tool-schema-walk.ts).
 */

export type ToolSchemaCompilation = { ok: true; validator: ArgumentValidator } | { ok: false; problems: ToolSchemaProblem[] };

/**
 * A fresh Ajv per schema, so `$id`s never collide across tools. No `loadSchema`: Ajv never fetches
 * anything. `$data` stays off (it would build `new RegExp` from argument values). strictSchema
 * off: OpenAI-style schemas carry keywords Ajv does not know (ignored, not fatal); it also keeps
 * Ajv from testing property names against patterns with `new RegExp` at compile time, as does
 * allowMatchingProperties. logger off: no console noise per tenant schema.
 */
function newAjv(options: Options = {}): Ajv {
  return new Ajv({
    allErrors: true,
    strictSchema: false,
    allowMatchingProperties: true,
    logger: false,
    formats: SAFE_FORMATS,
    code: { regExp: re2RegExp },
    ...options,
  });
}

let sharedMetaAjv: Ajv | undefined;

/**
 * One Ajv for checking schemas against the draft-07 meta-schema: compiling the meta-schema is most
 * of the cost of a fresh instance, and validateSchema registers nothing (no `$id` is kept).
 */
function metaSchemaAjv(): Ajv {
  sharedMetaAjv ??= newAjv();
  return sharedMetaAjv;
}


function refused(problems: ProblemList): ToolSchemaCompilation {
  return { ok: false, problems: problems.items };
}

/**
 * Checks and compiles a tool's `parameters` schema. Call it when a config is saved (to refuse a bad
 * schema with paths the author can fix) and through ToolSchemaCache at call start; it is CPU work
 * (milliseconds), never to be repeated per call. Never throws.
 */
export function compileToolSchema(schema: unknown): ToolSchemaCompilation {
  const problems = new ProblemList();
  if (!isObject(schema) || schema.type !== 'object') {
    problems.add([], 'parameters must be a JSON object schema with "type": "object" at the root');
    return refused(problems);
  }
  checkBounds(schema, problems);
  if (problems.items.length > 0) return refused(problems);
  if (schema.$schema !== undefined && (typeof schema.$schema !== 'string' || !DRAFT_07.test(schema.$schema))) {
    problems.add(['$schema'], 'only JSON Schema draft-07 is supported; leave $schema out');
    return refused(problems);
  }

  const cost = new SchemaWalk(schema, problems).cost(schema, []);
  if (cost.schemaNodes > MAX_EXPANDED_NODES) {
    problems.add([], `has more than ${MAX_EXPANDED_NODES} values once its $refs are followed; simplify it`);
  }
  if (cost.regexProgramSize > MAX_REGEX_PROGRAM_SIZE) {
    problems.add([], `its patterns are too complex together (RE2 program size ${cost.regexProgramSize}; at most ${MAX_REGEX_PROGRAM_SIZE})`);
  }
  const meta = metaSchemaAjv();
  if (!meta.validateSchema(schema)) metaSchemaProblems(meta.errors ?? [], problems);
  if (problems.items.length > 0) return refused(problems);

  try {
    return { ok: true, validator: new ArgumentValidator(newAjv({ validateSchema: false }).compile(schema), cost) };
  } catch (error) {
    problems.add([], `does not compile: ${excerpt((error as Error).message, 300)}`);
    return refused(problems);
  }
}

/** The problems as one line, for an exception or a log. */
export function describeSchemaProblems(problems: readonly ToolSchemaProblem[]): string {
  return problems.map((problem) => `${problem.path || '(root)'}: ${problem.message}`).join('; ');
}

/** The validator of a compiled schema, or the error a tool built from a stored (pre-check) config throws. */
export function validatorOrThrow(toolName: string, compiled: ToolSchemaCompilation): ArgumentValidator {
  if (compiled.ok) return compiled.validator;
  throw new Error(`tool "${toolName}": parameters is not a usable JSON Schema: schema is invalid: ${describeSchemaProblems(compiled.problems)}`);
}

/** compileToolSchema for a tool being built: throws (naming the tool) when the schema is refused. */
export function compileToolArguments(toolName: string, schema: unknown): ArgumentValidator {
  return validatorOrThrow(toolName, compileToolSchema(schema));
}
