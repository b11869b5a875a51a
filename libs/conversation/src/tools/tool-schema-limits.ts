/**
 * How much a tenant's tool schema may make the server do. A schema is tenant code that runs on the
 * event loop shared by every tenant's calls: its size, nesting, fan-out and patterns are capped.
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
export const PATH_SEGMENT_CHARS = 60;
/** The meta-schema Ajv's default class knows (its id, with or without the empty fragment). */
export const DRAFT_07 = /^http:\/\/json-schema\.org\/draft-07\/schema#?$/;

export interface ToolSchemaProblem {
  /** Dotted path inside the schema, '' for the schema itself (e.g. `properties.code.pattern`). */
  path: string;
  message: string;
}

