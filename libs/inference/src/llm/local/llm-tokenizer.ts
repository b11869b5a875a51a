import { EngineError } from '../../contracts';
import { ByteLevelBpeTokenizer } from '../../asr/local/byte-level-bpe-tokenizer';
import { byteCharsToBytes } from '../../asr/local/byte-level-encoding';
import { compileNormalizer, compilePreTokenizer, type NormalizerSpec, type PreTokenizerSpec } from './pre-tokenizer';

interface TokenizerJson {
  normalizer?: NormalizerSpec | null;
  pre_tokenizer?: PreTokenizerSpec | null;
  model?: { type?: string; ignore_merges?: boolean };
  added_tokens?: Array<{ id: number; content: string; special?: boolean }>;
}

/** Pre-tokenized words seen before: chat prompts repeat the same system prompt every turn. */
const WORD_CACHE_LIMIT = 20_000;

/**
 * A decoder-only LLM's tokenizer from its Hugging Face tokenizer.json, encoding as the
 * `tokenizers` library does for byte-level BPE: the text is first split on added tokens (the chat
 * markers `<|im_start|>`, `<|im_end|>`, Qwen's `<tool_call>`), each remaining part is normalized,
 * split by the file's own pre-tokenizer and merged with BPE (ByteLevelBpeTokenizer).
 */
export class LlmTokenizer {
  private readonly addedTokens: ReadonlyMap<string, number>;
  private readonly addedTokenPattern: RegExp | undefined;
  private readonly tokenBytesCache = new Map<number, Uint8Array>();
  private readonly wordCache = new Map<string, number[]>();
  /** Llama 3's `ignore_merges`: a word that is itself in the vocab is one token, merges or not. */
  private readonly ignoreMerges: boolean;

  private constructor(
    private readonly engine: string,
    private readonly bpe: ByteLevelBpeTokenizer,
    json: TokenizerJson,
    private readonly normalize: (text: string) => string,
    private readonly pretokenize: (text: string) => string[],
  ) {
    const added = new Map<string, number>();
    for (const token of json.added_tokens ?? []) added.set(token.content, token.id);
    this.addedTokens = added;
    // Longest first, so a token that contains another (`</tool_call>` vs `<tool_call>`) wins.
    const contents = [...added.keys()].filter((content) => content !== '').sort((a, b) => b.length - a.length);
    this.addedTokenPattern = contents.length > 0 ? new RegExp(`(${contents.map(escapeRegex).join('|')})`, 'u') : undefined;
    this.ignoreMerges = json.model?.ignore_merges === true;
  }

  /** Parses tokenizer.json text; throws a non-retryable model_missing EngineError when it is not byte-level BPE. */
  static fromJson(text: string, engine: string): LlmTokenizer {
    const bpe = ByteLevelBpeTokenizer.fromJson(text, engine);
    const json = JSON.parse(text) as TokenizerJson;
    return new LlmTokenizer(engine, bpe, json, compileNormalizer(engine, json.normalizer), compilePreTokenizer(engine, json.pre_tokenizer));
  }

  /** One more than the highest token id the tokenizer knows (the model's logits may be wider). */
  get vocabSize(): number {
    return this.bpe.vocabSize;
  }

  idOf(token: string): number | undefined {
    return this.addedTokens.get(token) ?? this.bpe.idOf(token);
  }

  isSpecial(id: number): boolean {
    return this.bpe.isSpecial(id);
  }

  /** Text -> ids. Added tokens written in the text become their single ids (as chat templates rely on). */
  encode(text: string): number[] {
    const ids: number[] = [];
    const parts = this.addedTokenPattern ? text.split(this.addedTokenPattern) : [text];
    parts.forEach((part, index) => {
      if (part === '') return;
      // split() with a capture group puts the separators (the added tokens) at odd indexes.
      const addedId = index % 2 === 1 ? this.addedTokens.get(part) : undefined;
      if (addedId !== undefined) {
        ids.push(addedId);
        return;
      }
      for (const word of this.pretokenize(this.normalize(part))) ids.push(...this.encodeWord(word));
    });
    return ids;
  }

  /**
   * The UTF-8 bytes a token stands for: its byte characters mapped back for regular tokens, the
   * literal text for added tokens. Undefined for ids the tokenizer lacks. Cached per id.
   */
  bytesOf(id: number): Uint8Array | undefined {
    const cached = this.tokenBytesCache.get(id);
    if (cached) return cached;
    const token = this.bpe.tokenOf(id);
    if (token === undefined) return undefined;
    const bytes = this.addedTokens.get(token) === id ? new TextEncoder().encode(token) : byteCharsToBytes(token);
    this.tokenBytesCache.set(id, bytes);
    return bytes;
  }

  /** Ids -> text, special tokens skipped. */
  decode(ids: readonly number[]): string {
    const decoder = new TextDecoder();
    let text = '';
    for (const id of ids) {
      if (this.isSpecial(id)) continue;
      const bytes = this.bytesOf(id);
      if (bytes) text += decoder.decode(bytes, { stream: true });
    }
    return text + decoder.decode();
  }

  private encodeWord(word: string): number[] {
    const cached = this.wordCache.get(word);
    if (cached) return cached;
    const whole = this.ignoreMerges ? this.bpe.idOf(word) : undefined;
    let ids: number[];
    try {
      ids = whole !== undefined ? [whole] : this.bpe.encodeWord(word);
    } catch (cause) {
      throw new EngineError(this.engine, 'model_missing', `tokenizer.json: no token for a byte of "${word}" (broken vocab)`, false, { cause });
    }
    if (this.wordCache.size >= WORD_CACHE_LIMIT) this.wordCache.clear();
    this.wordCache.set(word, ids);
    return ids;
  }
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
