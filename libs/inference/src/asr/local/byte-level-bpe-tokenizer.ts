import { EngineError } from '../../contracts';
import { byteCharsToBytes, pretokenize } from './byte-level-encoding';

/** The parts of a Hugging Face `tokenizer.json` (BPE model) this tokenizer reads. */
interface TokenizerJson {
  model?: { type?: string; vocab?: Record<string, number>; merges?: Array<string | [string, string]> };
  added_tokens?: Array<{ id: number; content: string; special?: boolean }>;
}

/**
 * Byte-level BPE tokenizer read from a Hugging Face `tokenizer.json` (Whisper, GPT-2 family).
 * Decoding maps tokens back to bytes through the GPT-2 byte map, so multi-byte UTF-8 characters
 * split across tokens come out whole.
 */
export class ByteLevelBpeTokenizer {
  private readonly idToToken = new Map<number, string>();
  private readonly tokenToId = new Map<string, number>();
  private readonly specialIds = new Set<number>();
  private readonly mergeRanks = new Map<string, number>();
  private readonly decoder = new TextDecoder('utf-8');
  private highestId = -1;

  private constructor(json: TokenizerJson) {
    const vocab = json.model?.vocab ?? {};
    for (const [token, id] of Object.entries(vocab)) this.addToken(token, id);
    for (const added of json.added_tokens ?? []) {
      this.addToken(added.content, added.id);
      if (added.special) this.specialIds.add(added.id);
    }
    (json.model?.merges ?? []).forEach((merge, rank) => {
      const [left, right] = typeof merge === 'string' ? splitMerge(merge) : merge;
      this.mergeRanks.set(`${left} ${right}`, rank);
    });
  }

  /** Parses `tokenizer.json` text; throws an EngineError naming the problem when it is not a BPE tokenizer. */
  static fromJson(text: string, engine = 'tokenizer'): ByteLevelBpeTokenizer {
    let json: TokenizerJson;
    try {
      json = JSON.parse(text) as TokenizerJson;
    } catch (cause) {
      throw new EngineError(engine, 'model_missing', 'tokenizer.json is not valid JSON', false, { cause });
    }
    if (json.model?.type !== 'BPE' || !json.model.vocab) {
      throw new EngineError(engine, 'model_missing', `tokenizer.json: expected a BPE model with a vocab, got type ${String(json.model?.type)}`, false);
    }
    return new ByteLevelBpeTokenizer(json);
  }

  /** One more than the highest token id. */
  get vocabSize(): number {
    return this.highestId + 1;
  }

  idOf(token: string): number | undefined {
    return this.tokenToId.get(token);
  }

  tokenOf(id: number): string | undefined {
    return this.idToToken.get(id);
  }

  isSpecial(id: number): boolean {
    return this.specialIds.has(id);
  }

  get specialTokenIds(): ReadonlySet<number> {
    return this.specialIds;
  }

  /** Text -> token ids (no special tokens added). */
  encode(text: string): number[] {
    const ids: number[] = [];
    for (const word of pretokenize(text)) {
      for (const piece of this.applyMerges(word)) {
        const id = this.tokenToId.get(piece);
        // Every single byte character is in a byte-level vocab; a missing one means a broken file.
        if (id === undefined) throw new EngineError('tokenizer', 'bad_request', `no token for "${piece}"`, false);
        ids.push(id);
      }
    }
    return ids;
  }

  /**
   * BPE over one pre-tokenized word already mapped to byte characters, for callers that split
   * text with the tokenizer.json's own pre-tokenizer (the LLM tokenizers: Qwen's regex, digits).
   */
  encodeWord(word: string): number[] {
    return this.applyMerges(word).map((piece) => {
      const id = this.tokenToId.get(piece);
      if (id === undefined) throw new EngineError('tokenizer', 'bad_request', `no token for "${piece}"`, false);
      return id;
    });
  }

  /** Token ids -> text; special tokens are skipped unless asked for. */
  decode(ids: readonly number[], options: { skipSpecial?: boolean } = {}): string {
    const skipSpecial = options.skipSpecial ?? true;
    let chars = '';
    let text = '';
    for (const id of ids) {
      const token = this.idToToken.get(id);
      if (token === undefined) continue;
      if (this.specialIds.has(id)) {
        if (skipSpecial) continue;
        text += this.decoder.decode(byteCharsToBytes(chars)) + token;
        chars = '';
        continue;
      }
      chars += token;
    }
    return text + this.decoder.decode(byteCharsToBytes(chars));
  }

  private applyMerges(word: string): string[] {
    let parts = Array.from(word);
    while (parts.length > 1) {
      let bestRank = Infinity;
      let bestIndex = -1;
      for (let i = 0; i < parts.length - 1; i++) {
        const rank = this.mergeRanks.get(`${parts[i]} ${parts[i + 1]}`);
        if (rank !== undefined && rank < bestRank) {
          bestRank = rank;
          bestIndex = i;
        }
      }
      if (bestIndex < 0) break;
      const merged: string[] = [];
      const left = parts[bestIndex];
      const right = parts[bestIndex + 1];
      for (let i = 0; i < parts.length; i++) {
        if (i < parts.length - 1 && parts[i] === left && parts[i + 1] === right) {
          merged.push(`${left}${right}`);
          i++;
        } else {
          merged.push(parts[i] as string);
        }
      }
      parts = merged;
    }
    return parts;
  }

  private addToken(token: string, id: number): void {
    this.highestId = Math.max(this.highestId, id);
    this.idToToken.set(id, token);
    this.tokenToId.set(token, id);
  }
}

function splitMerge(merge: string): [string, string] {
  const space = merge.indexOf(' ', 1);
  return [merge.slice(0, space), merge.slice(space + 1)];
}
