import { secretHint } from './secret-hint';

describe('secretHint', () => {
  it('gives the last 4 characters of secrets of 16 characters or more', () => {
    expect(secretHint('0123456789abcdef')).toBe('cdef');
    expect(secretHint('sk-proj-abcdefghijklmnopqrstuvwxyz1234')).toBe('1234');
  });

  it('gives nothing for shorter secrets, which 4 characters would largely reveal', () => {
    expect(secretHint('0123456789abcde')).toBe('');
    expect(secretHint('hunter2')).toBe('');
    expect(secretHint('')).toBe('');
  });

  it('counts and cuts whole code points, never half a surrogate pair', () => {
    const value = `${'a'.repeat(12)}b🔑c🔑`;
    expect(secretHint(value)).toBe('b🔑c🔑');
    // 15 code points (but 16 UTF-16 units): too short.
    expect(secretHint(`${'a'.repeat(14)}🔑`)).toBe('');
  });
});
