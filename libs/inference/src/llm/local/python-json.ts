/**
 * JSON text as Python's `json.dumps(value, ensure_ascii=False)` writes it, which is what a chat
 * template's `tojson` filter produces in transformers: `", "` between items and `": "` after keys.
 * Prompts rendered here then match, byte for byte, the ones the model was trained on.
 */
export function pythonJsonDumps(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : value > 0 ? 'Infinity' : value < 0 ? '-Infinity' : 'NaN';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (Array.isArray(value)) return `[${value.map(pythonJsonDumps).join(', ')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, item]) => item !== undefined && typeof item !== 'function');
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}: ${pythonJsonDumps(item)}`).join(', ')}}`;
  }
  if (typeof value === 'bigint') return value.toString();
  // Functions and symbols have no JSON form (JSON.stringify drops them too).
  return 'null';
}
