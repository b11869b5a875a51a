import { describe, expect, it } from '@jest/globals';
import { sideBySide, stableJson } from './side-by-side';

describe('sideBySide (config versions)', () => {
  it('prints JSON with sorted keys, so key order is never a difference', () => {
    expect(stableJson({ b: 1, a: { d: [{ z: 1, y: 2 }], c: null } })).toBe(stableJson({ a: { c: null, d: [{ y: 2, z: 1 }] }, b: 1 }));
    expect(sideBySide({ b: 1, a: 2 }, { a: 2, b: 1 }).every((row) => row.kind === 'same')).toBe(true);
  });

  it('puts a changed value beside its old value, each side with its own line numbers', () => {
    const rows = sideBySide({ llm: { model: 'a', temperature: 0.2 } }, { llm: { model: 'b', temperature: 0.2 } });
    const changed = rows.filter((row) => row.kind !== 'same');
    expect(changed).toEqual([{ kind: 'changed', left: { number: 3, text: '    "model": "a",' }, right: { number: 3, text: '    "model": "b",' } }]);
    expect(rows).toHaveLength(6);
  });

  it('marks only the added line when a field is added after the last one (its comma is no change)', () => {
    const rows = sideBySide({ llm: { provider: 'openai' } }, { llm: { provider: 'openai', temperature: 0.7 } });
    expect(rows.filter((row) => row.kind !== 'same')).toEqual([{ kind: 'added', right: { number: 4, text: '    "temperature": 0.7' } }]);
    // The unchanged line shows each side's own text.
    const provider = rows.find((row) => row.left?.text.includes('provider'));
    expect(provider).toEqual({ kind: 'same', left: { number: 3, text: '    "provider": "openai"' }, right: { number: 3, text: '    "provider": "openai",' } });
  });

  it('shows removed lines on the left only, with blank space on the right', () => {
    const rows = sideBySide({ a: 1, b: 2, c: 3 }, { a: 1, c: 3 });
    expect(rows.filter((row) => row.kind !== 'same')).toEqual([{ kind: 'removed', left: { number: 3, text: '  "b": 2,' } }]);
    expect(rows.map((row) => row.right?.number ?? null)).toEqual([1, 2, null, 3, 4]);
  });
});
