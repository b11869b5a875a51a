import { compileToolSchema, type ToolSchemaCompilation } from './tool-schema';

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
