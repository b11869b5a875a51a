/**
 * Splits a reply into sentences so TTS can speak the first while the rest is synthesized.
 * A sentence ends at . ! ? ; or … followed by whitespace (or the end), not after common
 * abbreviations or single initials ("Dr.", "e.g.", "J."), and never inside numbers ("3.5").
 * Sentences longer than `maxChars` are split again at the last comma or space before the limit.
 */
// Only abbreviations that are not also words ("no.", "sat." and "sun." end sentences too).
const ABBREVIATIONS = new Set([
  ...['mr', 'mrs', 'ms', 'dr', 'prof', 'sr', 'jr', 'vs', 'etc', 'e.g', 'i.e', 'approx', 'dept', 'inc', 'ltd'],
  ...['jan', 'feb', 'apr', 'aug', 'sep', 'sept', 'oct', 'nov', 'dec'],
]);

export function splitSentences(text: string, maxChars = 300): string[] {
  const sentences: string[] = [];
  let start = 0;
  const boundary = /[.!?;…]+["')\]]*(?=\s|$)/g;
  for (const match of text.matchAll(boundary)) {
    const end = match.index + match[0].length;
    if (match[0].startsWith('.') && endsWithAbbreviation(text.slice(start, match.index))) continue;
    pushSentence(sentences, text.slice(start, end), maxChars);
    start = end;
  }
  pushSentence(sentences, text.slice(start), maxChars);
  return sentences;
}

function endsWithAbbreviation(before: string): boolean {
  const word = /(\S+)$/.exec(before)?.[1]?.toLowerCase();
  if (!word) return false;
  return ABBREVIATIONS.has(word) || /^[a-z]$/i.test(word);
}

function pushSentence(sentences: string[], raw: string, maxChars: number): void {
  let rest = raw.trim();
  while (rest.length > maxChars) {
    const window = rest.slice(0, maxChars);
    const comma = window.lastIndexOf(', ');
    const space = window.lastIndexOf(' ');
    const cut = comma > maxChars / 3 ? comma + 1 : space > 0 ? space : maxChars;
    sentences.push(rest.slice(0, cut).trim());
    rest = rest.slice(cut).trim();
  }
  if (rest) sentences.push(rest);
}
