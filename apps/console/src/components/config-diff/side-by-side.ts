import { diffArrays } from 'diff';

/**
 * Two config versions as side-by-side rows: both printed as JSON with sorted keys (so key order
 * never shows as a change), compared line by line (jsdiff's diffArrays over the lines, where a
 * trailing comma alone is no change, so a field added after the last one marks only the new
 * line), and a removed run paired row by row with the added run that replaces it, so a changed
 * value sits beside its old value.
 */

export interface DiffLine {
  /** 1-based line number in its version's text. */
  number: number;
  text: string;
}

export interface DiffRow {
  kind: 'same' | 'changed' | 'removed' | 'added';
  left?: DiffLine;
  right?: DiffLine;
}

/** JSON with every object's keys sorted, two-space indented. */
export function stableJson(value: unknown): string {
  return JSON.stringify(sortKeys(value), null, 2);
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sortKeys((value as Record<string, unknown>)[key])]),
  );
}

/** A line's content for comparing: a trailing comma only says another line follows. */
function sameLine(a: string, b: string): boolean {
  return a.replace(/,$/, '') === b.replace(/,$/, '');
}

export function sideBySide(before: unknown, after: unknown): DiffRow[] {
  const oldLines = stableJson(before).split('\n');
  const newLines = stableJson(after).split('\n');
  const rows: DiffRow[] = [];
  // Positions in each version's lines: rows show each side's own text, whatever the comparison ignored.
  let oldAt = 0;
  let newAt = 0;
  const left = (): DiffLine => ({ number: oldAt + 1, text: oldLines[oldAt++] ?? '' });
  const right = (): DiffLine => ({ number: newAt + 1, text: newLines[newAt++] ?? '' });
  let removed = 0;
  const pairRemovedWith = (added: number) => {
    for (let index = 0; index < Math.max(removed, added); index += 1) {
      if (index < removed && index < added) rows.push({ kind: 'changed', left: left(), right: right() });
      else if (index < removed) rows.push({ kind: 'removed', left: left() });
      else rows.push({ kind: 'added', right: right() });
    }
    removed = 0;
  };
  for (const change of diffArrays(oldLines, newLines, { comparator: sameLine })) {
    if (change.removed) {
      removed += change.count;
    } else if (change.added) {
      pairRemovedWith(change.count);
    } else {
      pairRemovedWith(0);
      for (let index = 0; index < change.count; index += 1) {
        rows.push({ kind: 'same', left: left(), right: right() });
      }
    }
  }
  pairRemovedWith(0);
  return rows;
}
