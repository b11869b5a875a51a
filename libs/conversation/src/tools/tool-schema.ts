import Ajv, { type ErrorObject, type FormatDefinition, type Options } from 'ajv';
import addFormats, { type FormatName } from 'ajv-formats';
import { RE2JS } from 're2js';
import { ArgumentValidator, type ValidationCost } from './tool-arguments';
import { excerpt } from './tool-outcome';

/**
 * Tenant-written tool `parameters` schemas, checked when saved and compiled once per agent config
 * version. A schema is tenant code that runs on the event loop shared by every tenant's calls, so
 * whatever it may make Ajv do must stay bounded: regular expressions run on RE2 (linear time,
 * never backtracking), and the schema's own size, nesting and fan-out are capped.
 */

/** Serialised size: a tool's arguments schema is a form, not a document. */
export const MAX_SCHEMA_BYTES = 64 * 1024;
/** JSON nesting (objects and arrays), so the walk, Ajv's compiler and its generated code stay shallow. */
export const MAX_SCHEMA_DEPTH = 32;
/** JSON values in the schema (objects, arrays, keys' values, enum members): bounds compile time. */
export const MAX_SCHEMA_NODES = 2000;
/**
 * JSON values once every `$ref` is followed: `$ref` fan-out could otherwise make a small schema
 * run exponentially long. (What a call may then send is bounded by ValidationCost.)
 */
export const MAX_EXPANDED_NODES = 10_000;
/** `uniqueItems` compares every pair of items, so it needs a small `maxItems`. */
export const MAX_UNIQUE_ITEMS = 100;
/** Characters of one `pattern` / `patternProperties` key. */
export const MAX_PATTERN_CHARS = 1000;
/**
 * RE2 program size summed over every pattern the expanded schema applies. RE2 is linear in the text
 * but its worst case per character grows with program size (about 0.3 s for 32 KiB of text against
 * a 1000-instruction pattern); ValidationCost then bounds the text a call may send.
 */
export const MAX_REGEX_PROGRAM_SIZE = 2000;
/** Problems listed for one schema; more only repeat the point. */
export const MAX_PROBLEMS = 20;
const PATH_SEGMENT_CHARS = 60;
/** The meta-schema Ajv's default class knows (its id, with or without the empty fragment). */
const DRAFT_07 = /^http:\/\/json-schema\.org\/draft-07\/schema#?$/;

export interface ToolSchemaProblem {
  /** Dotted path inside the schema, '' for the schema itself (e.g. `properties.code.pattern`). */
  path: string;
  message: string;
}

export type ToolSchemaCompilation = { ok: true; validator: ArgumentValidator } | { ok: false; problems: ToolSchemaProblem[] };

type SchemaObject = Record<string, unknown>;
type RegExpEngine = NonNullable<NonNullable<Options['code']>['regExp']>;

function isObject(value: unknown): value is SchemaObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function pathText(segments: readonly string[]): string {
  return segments.map((segment) => excerpt(segment, PATH_SEGMENT_CHARS)).join('.');
}

function isHex(text: string): boolean {
  return text.length > 0 && /^[0-9a-fA-F]+$/.test(text);
}

/**
 * JSON Schema patterns are ECMAScript syntax; RE2 spells `\uXXXX` and `\u{X}` as `\x{X}` (a
 * surrogate pair as one code point). Only that is rewritten: everything RE2 reads differently
 * (backreferences, lookaround, `\k<name>`) is refused by RE2 rather than quietly reinterpreted.
 */
function toRe2Syntax(pattern: string): string {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i]!;
    if (char !== '\\' || pattern[i + 1] !== 'u') {
      out += char;
      if (char === '\\' && i + 1 < pattern.length) out += pattern[++i]!;
      continue;
    }
    const close = pattern[i + 2] === '{' ? pattern.indexOf('}', i + 3) : -1;
    if (close !== -1 && isHex(pattern.slice(i + 3, close))) {
      out += `\\x{${pattern.slice(i + 3, close)}}`;
      i = close;
    } else if (isHex(pattern.slice(i + 2, i + 6)) && pattern.slice(i + 2, i + 6).length === 4) {
      let code = parseInt(pattern.slice(i + 2, i + 6), 16);
      const low = pattern.slice(i + 6, i + 12);
      if (code >= 0xd800 && code <= 0xdbff && /^\\u[dD][c-fC-F][0-9a-fA-F]{2}$/.test(low)) {
        code = 0x10000 + ((code - 0xd800) << 10) + (parseInt(low.slice(2), 16) - 0xdc00);
        i += 6;
      }
      out += `\\x{${code.toString(16)}}`;
      i += 5;
    } else {
      out += '\\u';
      i += 1;
    }
  }
  return out;
}

/** Throws RE2's syntax error (backreference, lookaround, bad repeat, ...) when RE2 cannot run `pattern`. */
function compileRe2(pattern: string): RE2JS {
  return RE2JS.compile(toRe2Syntax(pattern));
}

/**
 * Ajv's `code.regExp`: every `pattern` and `patternProperties` key is compiled here, never with
 * `new RegExp`. Ajv only passes flags '' or 'u'; RE2 always matches by code point, as 'u' does.
 * `toString` must differ per pattern: Ajv shares compiled patterns between keywords by that key.
 * `code` would only be used to emit standalone validation code, which is never done here.
 */
export const re2RegExp: RegExpEngine = Object.assign(
  (pattern: string) => {
    const re = compileRe2(pattern);
    return { test: (text: string) => re.test(text), toString: () => `re2:/${pattern}/` };
  },
  { code: 'require("re2js").RE2JS.compile' },
);

/** A string format checked by RE2, with the regex taken from ajv-formats, after a length cap. */
function re2Format(name: FormatName, mode: 'fast' | 'full', maxChars: number): FormatDefinition<string> {
  const source = addFormats.get(name, mode);
  if (!(source instanceof RegExp)) throw new Error(`ajv-formats "${name}" (${mode}) is no longer a regular expression`);
  const re = RE2JS.compile(source.source, source.flags.includes('i') ? RE2JS.CASE_INSENSITIVE : 0);
  return { type: 'string', validate: (text) => text.length <= maxChars && re.test(text) };
}

/** One of ajv-formats' function formats (dates and times: short anchored regexes plus range checks), after a length cap. */
function cappedFormat(name: FormatName, maxChars: number): FormatDefinition<string> {
  const format = addFormats.get(name, 'full');
  const validate = isObject(format) ? format.validate : undefined;
  if (typeof validate !== 'function') throw new Error(`ajv-formats "${name}" is no longer a function format`);
  const check = validate as (text: string) => boolean;
  return { type: 'string', validate: (text) => text.length <= maxChars && check(text) };
}

const DURATION = RE2JS.compile('^P(?:(?:\\d+Y)?(?:\\d+M)?(?:\\d+D)?(?:T(?:\\d+H)?(?:\\d+M)?(?:\\d+S)?)?|\\d+W)$');
const HOSTNAME = RE2JS.compile(
  '^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\\.[a-z0-9](?:[-0-9a-z]{0,61}[0-9a-z])?)*\\.?$',
  RE2JS.CASE_INSENSITIVE,
);

/**
 * The formats a tool schema may use; any other format name is ignored, as before. Not ajv-formats'
 * own set: several of its checks are JavaScript regexes run on model-written text, and some can
 * backtrack badly (`url`, full `email` and `uri` are long, nested patterns; `duration` and
 * `hostname` use lookaround, which RE2 lacks). So: OpenAI's formats plus a few common ones, each
 * capped in length, with every regex on RE2 (ajv-formats' own source where RE2 can compile it; fast
 * mode for `email`, `uri`, `uri-reference`; `duration` and `hostname` rewritten without
 * lookaround). Dropped: `url` (deprecated), `regex` (would compile model text with `new RegExp`),
 * `byte`, `uri-template`, `json-pointer-uri-fragment`.
 */
const SAFE_FORMATS: Record<string, FormatDefinition<string> | FormatDefinition<number> | true> = {
  date: cappedFormat('date', 32),
  time: cappedFormat('time', 64),
  'date-time': cappedFormat('date-time', 64),
  'iso-time': cappedFormat('iso-time', 64),
  'iso-date-time': cappedFormat('iso-date-time', 64),
  // ajv-formats: `^P(?!$)(...|(\d+W)?)$` with `T(?=\d)`; the lookarounds become the two string checks.
  duration: { type: 'string', validate: (text) => text.length > 1 && text.length <= 64 && !text.endsWith('T') && DURATION.test(text) },
  email: re2Format('email', 'fast', 320),
  // ajv-formats: a lookahead `(?=.{1,253}\.?$)` caps the length; here it is a plain length check.
  hostname: {
    type: 'string',
    validate: (text) => {
      const name = text.endsWith('.') ? text.slice(0, -1) : text;
      return name.length >= 1 && name.length <= 253 && HOSTNAME.test(text);
    },
  },
  ipv4: re2Format('ipv4', 'full', 15),
  ipv6: re2Format('ipv6', 'full', 45),
  uuid: re2Format('uuid', 'full', 45),
  uri: re2Format('uri', 'fast', 8192),
  'uri-reference': re2Format('uri-reference', 'fast', 8192),
  'json-pointer': re2Format('json-pointer', 'full', 8192),
  'relative-json-pointer': re2Format('relative-json-pointer', 'full', 8192),
  int32: addFormats.get('int32') as FormatDefinition<number>,
  int64: addFormats.get('int64') as FormatDefinition<number>,
  float: addFormats.get('float') as FormatDefinition<number>,
  double: addFormats.get('double') as FormatDefinition<number>,
  password: true,
  binary: true,
};

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

class ProblemList {
  readonly items: ToolSchemaProblem[] = [];

  /** Identical problems (Ajv reports some twice) are listed once; beyond MAX_PROBLEMS they are dropped. */
  add(path: readonly string[], message: string): void {
    const problem = { path: pathText(path), message };
    if (this.items.length >= MAX_PROBLEMS) return;
    if (this.items.some((known) => known.path === problem.path && known.message === problem.message)) return;
    this.items.push(problem);
  }
}

/** Depth, node count and serialised size, checked before anything else reads the schema. */
function checkBounds(schema: unknown, problems: ProblemList): void {
  const stack: { value: unknown; path: readonly string[]; depth: number }[] = [{ value: schema, path: [], depth: 1 }];
  let nodes = 0;
  while (stack.length > 0) {
    const { value, path, depth } = stack.pop()!;
    if (++nodes > MAX_SCHEMA_NODES) {
      problems.add([], `has more than ${MAX_SCHEMA_NODES} values; simplify it`);
      return;
    }
    if (typeof value !== 'object' || value === null) {
      if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) continue;
      problems.add(path, 'is not a JSON value');
      return;
    }
    if (depth > MAX_SCHEMA_DEPTH) {
      problems.add(path, `nests deeper than ${MAX_SCHEMA_DEPTH} levels`);
      return;
    }
    const entries = Array.isArray(value) ? value.map((item, index) => [String(index), item] as const) : Object.entries(value);
    for (const [key, item] of entries) stack.push({ value: item, path: [...path, key], depth: depth + 1 });
  }
  const bytes = Buffer.byteLength(JSON.stringify(schema), 'utf8');
  if (bytes > MAX_SCHEMA_BYTES) problems.add([], `is ${bytes} bytes long as JSON; at most ${MAX_SCHEMA_BYTES} are accepted`);
}

/** Keywords whose value is one subschema, a list of them, or a map of name to subschema (draft-07, as Ajv runs it). */
const ONE_SCHEMA = new Set(['additionalItems', 'additionalProperties', 'contains', 'else', 'if', 'items', 'not', 'propertyNames', 'then']);
const SCHEMA_LIST = new Set(['allOf', 'anyOf', 'items', 'oneOf']);
const SCHEMA_MAP = new Set(['dependencies', 'patternProperties', 'properties']);
/** Checked like the rest but only counted where a `$ref` uses them. */
const DEFINITIONS = new Set(['$defs', 'definitions']);

/** JSON values in `value` (already bounded by checkBounds). */
function countValues(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 1;
  return 1 + (Array.isArray(value) ? value : Object.values(value)).reduce((sum: number, item) => sum + countValues(item), 0);
}

/**
 * Walks the schema as Ajv will run it, following local `$ref`s: refuses remote and recursive
 * references, patterns RE2 cannot run and unbounded `uniqueItems`, and totals the expanded
 * schema's ValidationCost (memoised per subschema, so the walk stays linear however much `$ref`
 * fans out).
 */
class SchemaWalk {
  private readonly costs = new Map<SchemaObject, ValidationCost>();
  private readonly active = new Set<SchemaObject>();

  constructor(
    private readonly root: SchemaObject,
    private readonly problems: ProblemList,
  ) {}

  cost(schema: unknown, path: readonly string[]): ValidationCost {
    if (!isObject(schema)) return { schemaNodes: countValues(schema), regexProgramSize: 0 };
    const known = this.costs.get(schema);
    if (known !== undefined) return known;
    this.active.add(schema);
    const total: ValidationCost = { schemaNodes: 1, regexProgramSize: 0 };
    const add = (cost: ValidationCost) => {
      total.schemaNodes += cost.schemaNodes;
      total.regexProgramSize += cost.regexProgramSize;
    };
    for (const [keyword, value] of Object.entries(schema)) {
      const at = [...path, keyword];
      if (DEFINITIONS.has(keyword) && isObject(value)) {
        for (const [name, item] of Object.entries(value)) this.cost(item, [...at, name]);
      } else if (keyword === '$ref' && typeof value === 'string') {
        add(this.ref(value, at));
      } else if (SCHEMA_MAP.has(keyword) && isObject(value)) {
        for (const [name, item] of Object.entries(value)) {
          if (keyword === 'patternProperties') total.regexProgramSize += this.pattern(name, [...at, name]);
          add(this.cost(item, [...at, name]));
        }
      } else if (SCHEMA_LIST.has(keyword) && Array.isArray(value)) {
        value.forEach((item, index) => add(this.cost(item, [...at, String(index)])));
      } else if (ONE_SCHEMA.has(keyword) && (isObject(value) || typeof value === 'boolean')) {
        add(this.cost(value, at));
      } else {
        if (keyword === 'pattern' && typeof value === 'string') total.regexProgramSize += this.pattern(value, at);
        total.schemaNodes += countValues(value);
      }
    }
    if (path.length > 0 && '$id' in schema) this.problems.add([...path, '$id'], '$id is only allowed at the root of the schema');
    if (schema.uniqueItems === true && !(typeof schema.maxItems === 'number' && schema.maxItems <= MAX_UNIQUE_ITEMS)) {
      this.problems.add([...path, 'uniqueItems'], `needs "maxItems" of at most ${MAX_UNIQUE_ITEMS} beside it: checking uniqueness takes time quadratic in the item count`);
    }
    this.active.delete(schema);
    this.costs.set(schema, total);
    return total;
  }

  /** RE2 program size of `pattern`, or 0 with a problem when RE2 cannot run it. */
  private pattern(pattern: string, path: readonly string[]): number {
    if (pattern.length > MAX_PATTERN_CHARS) {
      this.problems.add(path, `pattern is ${pattern.length} characters long; at most ${MAX_PATTERN_CHARS} are accepted`);
      return 0;
    }
    try {
      return compileRe2(pattern).programSize();
    } catch (error) {
      const reason = excerpt((error as Error).message.replace(/^error parsing regexp: /, ''), 160);
      const hint = /escape sequence|Perl syntax|named capture/.test(reason) ? ' (RE2 has no backreferences, lookahead or lookbehind)' : '';
      this.problems.add(path, `pattern ${JSON.stringify(excerpt(pattern, 80))} cannot run on the linear-time regex engine (RE2): ${reason}${hint}`);
      return 0;
    }
  }

  private ref(ref: string, path: readonly string[]): ValidationCost {
    const none = { schemaNodes: 1, regexProgramSize: 0 };
    if (!ref.startsWith('#')) {
      this.problems.add(path, `"${excerpt(ref, 80)}" is not a reference inside this schema: only "#/..." references are allowed, nothing is loaded`);
      return none;
    }
    const target = this.resolve(ref.slice(1));
    if (target === undefined) {
      this.problems.add(path, `"${excerpt(ref, 80)}" does not point into this schema (expected a JSON pointer such as "#/$defs/name")`);
      return none;
    }
    if (isObject(target.value) && this.active.has(target.value)) {
      this.problems.add(path, `"${excerpt(ref, 80)}" refers back to a schema that contains it: recursive schemas are not supported`);
      return none;
    }
    return this.cost(target.value, target.path);
  }

  /** The value at a URI-fragment JSON pointer ('' is the root), as Ajv resolves it. */
  private resolve(fragment: string): { value: unknown; path: string[] } | undefined {
    let pointer: string;
    try {
      pointer = decodeURIComponent(fragment);
    } catch {
      return undefined;
    }
    if (pointer !== '' && !pointer.startsWith('/')) return undefined;
    const path = pointer === '' ? [] : pointerSegments(pointer);
    let value: unknown = this.root;
    for (const part of path) {
      if (typeof value !== 'object' || value === null || !Object.prototype.hasOwnProperty.call(value, part)) return undefined;
      value = (value as SchemaObject)[part];
    }
    return { value, path };
  }
}

/** `/a/b~1c` as ['a', 'b/c']. */
function pointerSegments(pointer: string): string[] {
  return pointer
    .slice(1)
    .split('/')
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** Ajv's meta-schema errors (`/properties/code/minLength`) as problems with dotted paths. */
function metaSchemaProblems(errors: readonly ErrorObject[], problems: ProblemList): void {
  for (const error of errors) {
    problems.add(error.instancePath === '' ? [] : pointerSegments(error.instancePath), error.message ?? `fails "${error.keyword}"`);
  }
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

export const DEFAULT_TOOL_SCHEMA_CACHE_ENTRIES = 500;

/**
 * Compiled tool schemas by a caller-given key that must change whenever the schema can (e.g.
 * `${agentId}:${configVersion}:${toolName}`: config versions are immutable), so a schema compiles
 * once per config version rather than at every call start. Refusals are cached too: a stored
 * config saved before the checks existed would otherwise recompile at every call. Least recently
 * used entries go first beyond `maxEntries`.
 */
export class ToolSchemaCache {
  private readonly entries = new Map<string, ToolSchemaCompilation>();

  constructor(readonly maxEntries = DEFAULT_TOOL_SCHEMA_CACHE_ENTRIES) {
    if (!Number.isInteger(maxEntries) || maxEntries < 1) throw new Error(`maxEntries must be a positive integer, got ${maxEntries}`);
  }

  get size(): number {
    return this.entries.size;
  }

  compile(key: string, schema: unknown): ToolSchemaCompilation {
    const cached = this.entries.get(key);
    if (cached !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, cached);
      return cached;
    }
    const compiled = compileToolSchema(schema);
    this.entries.set(key, compiled);
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    return compiled;
  }
}
