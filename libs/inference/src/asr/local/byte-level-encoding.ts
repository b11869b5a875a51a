/**
 * GPT-2 style byte-level encoding, used by Whisper's tokenizer: every byte maps to one printable
 * Unicode character (so BPE merges work on visible text and no byte is ever unknown), and text is
 * split into words by the GPT-2 regex before merging.
 */

/** Byte value -> the character that stands for it in vocab/merges. */
export const BYTE_TO_CHAR: readonly string[] = buildByteToChar();

/** Inverse of BYTE_TO_CHAR. */
export const CHAR_TO_BYTE: ReadonlyMap<string, number> = new Map(BYTE_TO_CHAR.map((char, byte) => [char, byte]));

// Contractions, letter runs, digit runs, other symbols, whitespace: each optionally with its
// leading space, exactly the split GPT-2 and Whisper were trained with.
const PRETOKENIZE = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;

/** Splits text into pre-tokens and maps each to byte characters (ready for BPE merges). */
export function pretokenize(text: string): string[] {
  const encoder = new TextEncoder();
  const words: string[] = [];
  for (const match of text.matchAll(PRETOKENIZE)) {
    let word = '';
    for (const byte of encoder.encode(match[0])) word += BYTE_TO_CHAR[byte];
    words.push(word);
  }
  return words;
}

/** Byte characters -> UTF-8 bytes; characters outside the map (never in a valid vocab) are dropped. */
export function byteCharsToBytes(chars: string): Uint8Array {
  const bytes: number[] = [];
  for (const char of chars) {
    const byte = CHAR_TO_BYTE.get(char);
    if (byte !== undefined) bytes.push(byte);
  }
  return Uint8Array.from(bytes);
}

function buildByteToChar(): string[] {
  // Printable Latin-1 bytes stand for themselves; the rest are shifted to 256+ so none is
  // whitespace or a control character.
  const printable = (b: number): boolean => (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
  const table: string[] = new Array<string>(256);
  let shifted = 0;
  for (let byte = 0; byte < 256; byte++) {
    table[byte] = String.fromCodePoint(printable(byte) ? byte : 256 + shifted++);
  }
  return table;
}
