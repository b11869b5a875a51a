/**
 * What kind of place a space in normalised reply text is, for cutting it into TTS chunks: after a
 * sentence, after a clause, or just between two words. Only spaces are considered, so numbers
 * ("3.5", "1,000"), times ("10:30"), URLs and e-mail addresses (no spaces inside) are never cut.
 */

export type BoundaryKind = 'sentence' | 'clause' | 'word';

const SENTENCE_ENDS = new Set(['.', '!', '?', '…', '。', '！', '？']);
const CLAUSE_ENDS = new Set([',', ';', ':', '—', '–', '，', '；', '：', '、']);
/** Closing quotes and brackets that may follow the punctuation: `He said "stop." Then` ends a sentence. */
const CLOSERS = new Set(['"', "'", '”', '’', ')', ']', '}', '»', '」', '』']);
/** Opening quotes and brackets before a word: "(e.g." is still "e.g.". */
const OPENERS = /^["'“‘([{«「『]+/;
/** Titles and Latin shorthands whose dot is not a full stop ("Dr. Jones", "vs. Leeds"). */
const ABBREVIATIONS = new Set(['mr', 'mrs', 'ms', 'dr', 'st', 'prof', 'sr', 'jr', 'vs', 'etc', 'approx']);
/** Letter-dot runs: "e.g.", "i.e.", "U.S.", "a.m." (also "p.m. Then": a merge, which costs nothing). */
const DOTTED_INITIALS = /^(?:\p{L}\.){2,}$/u;
const LOWERCASE_START = /^\p{Ll}/u;

/**
 * The kind of the space at `spaceAt` in `text` (text[spaceAt] === ' '). Needs the character after
 * the space where there is one: a dot or ellipsis followed by a lowercase word is mid-sentence
 * ("I was... thinking", "approx. ten"). `noFullStop` holds the offsets of dots known not to end a
 * sentence (list numbers: "1. Billing").
 */
export function boundaryKind(text: string, spaceAt: number, noFullStop: (offset: number) => boolean): BoundaryKind {
  const wordStart = text.lastIndexOf(' ', spaceAt - 1) + 1;
  const word = text.slice(wordStart, spaceAt);
  let end = word.length;
  while (end > 0 && CLOSERS.has(word[end - 1]!)) end--;
  const mark = word[end - 1];
  if (mark === undefined) return 'word';
  if (SENTENCE_ENDS.has(mark)) return isFullStop(text, spaceAt, word.slice(0, end), wordStart + end - 1, noFullStop) ? 'sentence' : 'word';
  if (CLAUSE_ENDS.has(mark)) return 'clause';
  // A spaced hyphen used as a dash: "the new one - the blue one".
  if (word === '-') return 'clause';
  return 'word';
}

function isFullStop(text: string, spaceAt: number, word: string, markAt: number, noFullStop: (offset: number) => boolean): boolean {
  const mark = word[word.length - 1]!;
  const isEllipsis = mark === '…' || word.endsWith('..');
  if (mark !== '.' && !isEllipsis) return true;
  const nextStartsLowercase = LOWERCASE_START.test(text.slice(spaceAt + 1, spaceAt + 3));
  if (isEllipsis) return !nextStartsLowercase;
  if (noFullStop(markAt) || nextStartsLowercase) return false;
  const bare = word.replace(OPENERS, '');
  return !ABBREVIATIONS.has(bare.slice(0, -1).toLowerCase()) && !DOTTED_INITIALS.test(bare);
}
