import { BYTE_TO_CHAR, byteCharsToBytes, pretokenize } from '@switchboard/inference';

/**
 * The byte-level BPE base shared by the stand-in tokenizers (Whisper's and the chat LLM's): the
 * byte tokens in GPT-2 order, then merges learned from a corpus. Callers append their own
 * regular and special tokens after it.
 */

export interface ByteLevelVocabulary {
  /** Token -> id, in the order tokens were added (tokenizer.json's model.vocab). */
  vocab: Record<string, number>;
  /** Tokens by id. */
  tokens: string[];
  /** The merges as learned, in order (including any whose token was already in the vocab). */
  merges: Array<[string, string]>;
  /** Appends a regular token to vocab and tokens; returns its id. */
  add(token: string): number;
}

export interface ByteLevelVocabularyOptions {
  /**
   * What to do with a merge whose token is already in the vocab: 'add' appends it again (a new
   * id, as the stand-in Whisper vocabulary always has), 'skip' leaves it out.
   */
  existingMergeTokens: 'add' | 'skip';
}

export function buildByteLevelVocabulary(corpus: string, mergeCount: number, options: ByteLevelVocabularyOptions): ByteLevelVocabulary {
  const vocab: Record<string, number> = {};
  const tokens: string[] = [];
  const add = (token: string): number => {
    vocab[token] = tokens.length;
    tokens.push(token);
    return tokens.length - 1;
  };
  // Byte tokens in the GPT-2 order (printable bytes first), then merges as learned.
  for (const char of [...BYTE_TO_CHAR].sort((a, b) => a.codePointAt(0)! - b.codePointAt(0)!)) add(char);
  const merges = learnMerges(corpus, mergeCount);
  for (const [left, right] of merges) {
    if (options.existingMergeTokens === 'add' || vocab[left + right] === undefined) add(left + right);
  }
  return { vocab, tokens, merges, add };
}

/** Plain BPE training: repeatedly merge the most frequent adjacent pair (ties: first in sort order). */
/**
 * Ids (below `endExclusive`) of tokens whose bytes are plain English letters, spaces or
 * punctuation: the stand-in models decode to these, so their output reads as text.
 */
export function readableTokenIdsBelow(tokens: readonly string[], endExclusive: number): number[] {
  const readable: number[] = [];
  const decoder = new TextDecoder();
  for (let id = 0; id < endExclusive; id++) {
    if (/^[a-zA-Z ,.?']+$/.test(decoder.decode(byteCharsToBytes(tokens[id] as string)))) readable.push(id);
  }
  return readable;
}

export function learnMerges(corpus: string, count: number): Array<[string, string]> {
  const wordCounts = new Map<string, number>();
  for (const word of pretokenize(corpus)) wordCounts.set(word, (wordCounts.get(word) ?? 0) + 1);
  let words = [...wordCounts].map(([word, n]) => ({ parts: Array.from(word), n }));
  const merges: Array<[string, string]> = [];
  while (merges.length < count) {
    const pairCounts = new Map<string, number>();
    for (const { parts, n } of words) {
      for (let i = 0; i < parts.length - 1; i++) {
        const key = `${parts[i]} ${parts[i + 1]}`;
        pairCounts.set(key, (pairCounts.get(key) ?? 0) + n);
      }
    }
    let best: string | undefined;
    let bestCount = 0;
    for (const [key, n] of [...pairCounts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      if (n > bestCount) {
        best = key;
        bestCount = n;
      }
    }
    if (best === undefined) break;
    const space = best.indexOf(' ', 1);
    const left = best.slice(0, space);
    const right = best.slice(space + 1);
    merges.push([left, right]);
    words = words.map(({ parts, n }) => {
      const merged: string[] = [];
      for (let i = 0; i < parts.length; i++) {
        if (i < parts.length - 1 && parts[i] === left && parts[i + 1] === right) {
          merged.push(left + right);
          i++;
        } else {
          merged.push(parts[i] as string);
        }
      }
      return { parts: merged, n };
    });
  }
  return merges;
}
