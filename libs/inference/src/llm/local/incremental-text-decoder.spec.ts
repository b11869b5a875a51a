import { IncrementalTextDecoder } from './incremental-text-decoder';

/** A toy vocabulary: token id = one byte, plus 1000 = a silent special token, 1001 = an added token's text. */
function byteTokens(): IncrementalTextDecoder {
  return new IncrementalTextDecoder(
    (id) => (id < 256 ? Uint8Array.of(id) : id === 1001 ? new TextEncoder().encode('<tool_call>') : undefined),
    (id) => id === 1000,
  );
}

describe('IncrementalTextDecoder', () => {
  it('emits a multi-byte character only once its last byte arrives', () => {
    const decoder = byteTokens();
    const phone = Array.from(new TextEncoder().encode('☎')); // e2 98 8e
    expect(phone.map((id) => decoder.push(id))).toEqual(['', '', '☎']);
    const wave = Array.from(new TextEncoder().encode('a👋b')); // 61 f0 9f 91 8b 62
    expect(wave.map((id) => decoder.push(id))).toEqual(['a', '', '', '', '👋', 'b']);
    expect(decoder.end()).toBe('');
  });

  it('handles tokens that carry a character tail and the next character together', () => {
    const tokens: Record<number, Uint8Array> = { 1: Uint8Array.of(0x43, 0x61, 0x66, 0xc3), 2: Uint8Array.of(0xa9, 0x20, 0xc3), 3: Uint8Array.of(0xbc) };
    const decoder = new IncrementalTextDecoder((id) => tokens[id]);
    expect([1, 2, 3].map((id) => decoder.push(id))).toEqual(['Caf', 'é ', 'ü']);
  });

  it('skips silent tokens, prints added tokens as their text, ignores unknown ids', () => {
    const decoder = byteTokens();
    expect([0x68, 1000, 1001, 5000, 0x69].map((id) => decoder.push(id)).join('')).toBe('h<tool_call>i');
  });

  it('turns bytes that never complete a character into U+FFFD at the end, and invalid bytes at once', () => {
    const decoder = byteTokens();
    expect(decoder.push(0xe2)).toBe('');
    expect(decoder.push(0x98)).toBe('');
    expect(decoder.end()).toBe('\uFFFD');
    expect(byteTokens().push(0xff)).toBe('\uFFFD');
  });
});
