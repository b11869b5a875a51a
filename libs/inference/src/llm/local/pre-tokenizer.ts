import { EngineError } from '../../contracts';
import { BYTE_TO_CHAR, pretokenize as gpt2Pretokenize } from '../../asr/local/byte-level-encoding';

/**
 * The `normalizer` and `pre_tokenizer` sections of a Hugging Face tokenizer.json, for the
 * byte-level BPE families: GPT-2 (ByteLevel with its regex), Qwen2/2.5 and Llama 3 (a Split regex,
 * then ByteLevel without one), SmolLM2 (Digits, then ByteLevel). The result maps text to words
 * already in byte characters, ready for BPE merges.
 */
export interface PreTokenizerSpec {
  type?: string;
  pretokenizers?: PreTokenizerSpec[];
  add_prefix_space?: boolean;
  use_regex?: boolean;
  pattern?: { Regex?: string; String?: string };
  behavior?: string;
  invert?: boolean;
  individual_digits?: boolean;
}

export interface NormalizerSpec {
  type?: string;
  normalizers?: NormalizerSpec[];
}

type Splitter = (piece: string) => string[];
const UTF8 = new TextEncoder();

/** text -> normalized text; throws model_missing for normalizers a byte-level LLM tokenizer does not use. */
export function compileNormalizer(engine: string, spec: NormalizerSpec | null | undefined): (text: string) => string {
  if (!spec) return (text) => text;
  switch (spec.type) {
    case 'NFC':
    case 'NFD':
    case 'NFKC':
    case 'NFKD': {
      const form = spec.type;
      return (text) => text.normalize(form);
    }
    case 'Sequence': {
      const steps = (spec.normalizers ?? []).map((step) => compileNormalizer(engine, step));
      return (text) => steps.reduce((current, step) => step(current), text);
    }
    default:
      throw unsupported(engine, `normalizer ${String(spec.type)}`);
  }
}

/** text -> words in byte characters. Throws model_missing when the spec is not byte-level or uses an unsupported step. */
export function compilePreTokenizer(engine: string, spec: PreTokenizerSpec | null | undefined): (text: string) => string[] {
  const steps = spec?.type === 'Sequence' ? (spec.pretokenizers ?? []) : spec ? [spec] : [];
  const last = steps[steps.length - 1];
  if (last?.type !== 'ByteLevel' || steps.slice(0, -1).some((step) => step.type === 'ByteLevel')) {
    throw unsupported(engine, 'pre_tokenizer: expected ByteLevel as the last step (byte-level BPE)');
  }
  const splitters = steps.slice(0, -1).map((step) => compileSplitter(engine, step));
  const addPrefixSpace = last.add_prefix_space === true;
  const useRegex = last.use_regex !== false;
  return (text) => {
    let pieces = [text];
    for (const split of splitters) pieces = pieces.flatMap(split);
    const words: string[] = [];
    for (let piece of pieces) {
      if (piece === '') continue;
      if (addPrefixSpace && !piece.startsWith(' ')) piece = ` ${piece}`;
      if (useRegex) words.push(...gpt2Pretokenize(piece));
      else words.push(toByteChars(piece));
    }
    return words;
  };
}

function compileSplitter(engine: string, step: PreTokenizerSpec): Splitter {
  switch (step.type) {
    case 'Split': {
      if (step.invert === true) throw unsupported(engine, 'pre_tokenizer Split with invert');
      const behavior = step.behavior ?? 'Isolated';
      if (behavior !== 'Isolated' && behavior !== 'Removed') throw unsupported(engine, `pre_tokenizer Split behavior ${behavior}`);
      const regex = splitRegex(engine, step.pattern);
      return (piece) => splitByRegex(piece, regex, behavior === 'Isolated');
    }
    case 'Digits': {
      const regex = step.individual_digits === true ? /\p{Nd}/gu : /\p{Nd}+/gu;
      return (piece) => splitByRegex(piece, regex, true);
    }
    default:
      throw unsupported(engine, `pre_tokenizer step ${String(step.type)}`);
  }
}

function splitRegex(engine: string, pattern: PreTokenizerSpec['pattern']): RegExp {
  if (pattern?.String !== undefined) return new RegExp(escapeRegex(pattern.String), 'gu');
  if (pattern?.Regex === undefined) throw unsupported(engine, 'pre_tokenizer Split without a pattern');
  try {
    return new RegExp(toJsRegexSource(pattern.Regex), 'gu');
  } catch (cause) {
    throw new EngineError(engine, 'model_missing', `tokenizer.json: pre_tokenizer regex is not supported here: ${pattern.Regex.slice(0, 80)}`, false, { cause });
  }
}

/** Matches and the text between them as separate pieces (Isolated), or only the text between (Removed). */
function splitByRegex(piece: string, regex: RegExp, keepMatches: boolean): string[] {
  const pieces: string[] = [];
  let start = 0;
  for (const match of piece.matchAll(regex)) {
    if (match[0] === '') continue;
    if (match.index > start) pieces.push(piece.slice(start, match.index));
    if (keepMatches) pieces.push(match[0]);
    start = match.index + match[0].length;
  }
  if (start < piece.length) pieces.push(piece.slice(start));
  return pieces;
}

/**
 * Rust/Oniguruma regex -> JavaScript. The tokenizers' patterns are JS-compatible except for
 * scoped case-insensitive groups, `(?i:'s|'t|...)` (Qwen2, Llama 3), which Node 20 lacks: inside
 * them each ASCII letter becomes a two-case class.
 */
export function toJsRegexSource(source: string): string {
  let out = '';
  let i = 0;
  while (i < source.length) {
    if (source.startsWith('(?i:', i)) {
      const end = closingParen(source, i);
      out += `(?:${caseInsensitive(source.slice(i + 4, end))})`;
      i = end + 1;
      continue;
    }
    if (source[i] === '\\') {
      out += source.slice(i, i + 2);
      i += 2;
      continue;
    }
    out += source[i];
    i += 1;
  }
  return out;
}

function closingParen(source: string, open: number): number {
  let depth = 0;
  let inClass = false;
  for (let i = open; i < source.length; i++) {
    const char = source[i];
    if (char === '\\') {
      i += 1;
    } else if (inClass) {
      if (char === ']') inClass = false;
    } else if (char === '[') {
      inClass = true;
    } else if (char === '(') {
      depth += 1;
    } else if (char === ')') {
      depth -= 1;
      if (depth === 0) return i;
    }
  }
  throw new SyntaxError(`unbalanced group in ${source}`);
}

function caseInsensitive(body: string): string {
  let out = '';
  let inClass = false;
  for (let i = 0; i < body.length; i++) {
    const char = body[i] as string;
    if (char === '\\') {
      // Copy escapes whole, including \p{..} property names (their letters are not literals).
      const braced = body[i + 2] === '{' ? body.indexOf('}', i) : -1;
      const end = braced > 0 ? braced + 1 : i + 2;
      out += body.slice(i, end);
      i = end - 1;
    } else if (inClass) {
      // Class members are copied as they are: doubling letters would break ranges like a-z.
      if (char === ']') inClass = false;
      out += char;
    } else if (char === '[') {
      inClass = true;
      out += char;
    } else {
      out += /[a-z]/i.test(char) ? `[${char.toLowerCase()}${char.toUpperCase()}]` : char;
    }
  }
  return out;
}

function toByteChars(text: string): string {
  let chars = '';
  for (const byte of UTF8.encode(text)) chars += BYTE_TO_CHAR[byte];
  return chars;
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

function unsupported(engine: string, what: string): EngineError {
  return new EngineError(engine, 'model_missing', `tokenizer.json: unsupported ${what}`, false);
}
