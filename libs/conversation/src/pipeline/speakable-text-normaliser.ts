/**
 * The first stage of the speakable chunker: turns streamed LLM text into what TTS should read.
 * Markdown that a TTS engine would read aloud (`*`, `**`, backticks, `#` headings, `-`/`+`/`•`
 * bullets, `>` quotes, `---` rules) goes, the words stay, and every run of whitespace becomes one
 * space (none at the start).
 *
 * It works on deltas split anywhere: a character is only decided once the characters that could
 * change its fate have arrived (a `#` at a line start waits for what follows the run), so the
 * output is the same however the text was split. Nothing is held back except such an undecided
 * line-start marker.
 */

/** Normalised text out of one push, with the list-number dots that must not end a sentence. */
export interface NormalisedPiece {
  text: string;
  /** Offsets in `text` of dots that end a list number at a line start ("1. Billing"). */
  listNumberDots: number[];
}

/** What a line-start marker is, once enough of it has arrived to tell. */
type LineMarker =
  | { kind: 'undecided' }
  | { kind: 'none' }
  | { kind: 'strip'; length: number; staysAtLineStart: boolean }
  | { kind: 'list-number'; length: number };

const MAX_HEADING_LEVEL = 6;
/** Longer digit runs at a line start are not list numbers ("2024. was a good year" is rare, "123456789." rarer). */
const MAX_LIST_NUMBER_DIGITS = 9;
const BULLETS = new Set(['-', '+', '•', '*']);

const isLineBreak = (ch: string): boolean => ch === '\n' || ch === '\r';
const isBlank = (ch: string): boolean => /\s/.test(ch);
const isInlineBlank = (ch: string): boolean => isBlank(ch) && !isLineBreak(ch);
const isDigit = (ch: string): boolean => ch >= '0' && ch <= '9';

export class SpeakableTextNormaliser {
  private pending = '';
  private atLineStart = true;
  /** True at the start, so leading whitespace is dropped; then whether the last character out was a space. */
  private lastOutWasSpace = true;

  /** Adds a delta; returns the text now decided. With `final`, the stream ends: everything is decided. */
  push(delta: string, final = false): NormalisedPiece {
    this.pending += delta;
    const out: string[] = [];
    const listNumberDots: number[] = [];
    let pos = 0;
    const emit = (ch: string): void => {
      out.push(ch);
      this.lastOutWasSpace = false;
    };
    while (pos < this.pending.length) {
      const ch = this.pending[pos]!;
      if (isBlank(ch)) {
        if (!this.lastOutWasSpace) {
          out.push(' ');
          this.lastOutWasSpace = true;
        }
        if (isLineBreak(ch)) this.atLineStart = true;
        pos++;
        continue;
      }
      if (this.atLineStart) {
        const marker = lineMarkerAt(this.pending, pos, final);
        if (marker.kind === 'undecided') break;
        if (marker.kind === 'strip') {
          pos += marker.length;
          this.atLineStart = marker.staysAtLineStart;
          continue;
        }
        this.atLineStart = false;
        if (marker.kind === 'list-number') {
          for (const digit of this.pending.slice(pos, pos + marker.length)) emit(digit);
          if (this.pending[pos + marker.length - 1] === '.') listNumberDots.push(out.length - 1);
          pos += marker.length;
          continue;
        }
      }
      // Emphasis and code marks are read aloud as "asterisk"/"backtick"; the words between them stay.
      if (ch !== '*' && ch !== '`') emit(ch);
      pos++;
    }
    this.pending = this.pending.slice(pos);
    let text = out.join('');
    if (final) {
      text = text.replace(/ $/, '');
      this.reset();
    }
    return { text, listNumberDots };
  }

  /** Back to the start of a new text (the next reply). */
  reset(): void {
    this.pending = '';
    this.atLineStart = true;
    this.lastOutWasSpace = true;
  }
}

/** The whole of `text` as TTS should read it (what the chunks, joined with spaces, add up to). */
export function normaliseSpeakableText(text: string): string {
  return new SpeakableTextNormaliser().push(text, true).text;
}

/**
 * What starts at `pos` (a non-blank character at a line start, after any indentation). Decided
 * only from characters that have arrived; at the end of the stream (`final`) a marker cut short
 * is decided as what it is so far.
 */
function lineMarkerAt(text: string, pos: number, final: boolean): LineMarker {
  const ch = text[pos]!;
  const end = text.length;
  if (ch === '#') {
    let run = 0;
    while (pos + run < end && text[pos + run] === '#') run++;
    if (run > MAX_HEADING_LEVEL) return { kind: 'none' };
    if (pos + run === end) return final ? { kind: 'strip', length: run, staysAtLineStart: false } : { kind: 'undecided' };
    // "#hashtag" and "#1" are not headings: a heading's marks are followed by a blank.
    return isBlank(text[pos + run]!) ? { kind: 'strip', length: run, staysAtLineStart: false } : { kind: 'none' };
  }
  if (ch === '-') {
    const rule = horizontalRuleAt(text, pos, final);
    if (rule.kind !== 'none') return rule;
  }
  if (BULLETS.has(ch) || ch === '>') {
    if (pos + 1 === end) return final ? { kind: 'none' } : { kind: 'undecided' };
    // A quote mark may be followed by a bullet or a heading ("> - item"), so the line start stays.
    if (isBlank(text[pos + 1]!)) return { kind: 'strip', length: 1, staysAtLineStart: ch === '>' };
    return { kind: 'none' };
  }
  if (isDigit(ch)) {
    let digits = 0;
    while (pos + digits < end && isDigit(text[pos + digits]!)) digits++;
    if (digits > MAX_LIST_NUMBER_DIGITS) return { kind: 'none' };
    const after = pos + digits;
    if (after + 1 >= end) return final ? { kind: 'none' } : { kind: 'undecided' };
    const mark = text[after];
    if ((mark === '.' || mark === ')') && isBlank(text[after + 1]!)) return { kind: 'list-number', length: digits + 1 };
    return { kind: 'none' };
  }
  return { kind: 'none' };
}

/** "---" (or longer) alone on its line: a markdown rule, which has nothing to say. */
function horizontalRuleAt(text: string, pos: number, final: boolean): LineMarker {
  let run = 0;
  while (pos + run < text.length && text[pos + run] === '-') run++;
  let after = pos + run;
  while (after < text.length && isInlineBlank(text[after]!)) after++;
  if (after === text.length) {
    if (!final) return run >= 3 || pos + run === text.length ? { kind: 'undecided' } : { kind: 'none' };
    return run >= 3 ? { kind: 'strip', length: after - pos, staysAtLineStart: false } : { kind: 'none' };
  }
  if (run >= 3 && isLineBreak(text[after]!)) return { kind: 'strip', length: after - pos, staysAtLineStart: false };
  return { kind: 'none' };
}
