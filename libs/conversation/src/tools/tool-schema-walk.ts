import type { ErrorObject } from 'ajv';
import { compileRe2 } from './re2-regexp';
import type { ValidationCost } from './tool-arguments';
import { excerpt } from './tool-outcome';
import {
  MAX_PATTERN_CHARS,
  MAX_PROBLEMS,
  MAX_SCHEMA_BYTES,
  MAX_SCHEMA_DEPTH,
  MAX_SCHEMA_NODES,
  MAX_UNIQUE_ITEMS,
  PATH_SEGMENT_CHARS,
  type ToolSchemaProblem,
} from './tool-schema-limits';

/**
 * Reading a tenant's schema before Ajv does: its bounds (size, depth, values), the cost of
 * validating an argument with it (how far its $refs expand, how complex its patterns are), and
 * problems reported as dotted paths the author can find.
 */

export type SchemaObject = Record<string, unknown>;

export function isObject(value: unknown): value is SchemaObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function pathText(segments: readonly string[]): string {
  return segments.map((segment) => excerpt(segment, PATH_SEGMENT_CHARS)).join('.');
}

export class ProblemList {
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
export function checkBounds(schema: unknown, problems: ProblemList): void {
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
export class SchemaWalk {
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
export function metaSchemaProblems(errors: readonly ErrorObject[], problems: ProblemList): void {
  for (const error of errors) {
    problems.add(error.instancePath === '' ? [] : pointerSegments(error.instancePath), error.message ?? `fails "${error.keyword}"`);
  }
}

