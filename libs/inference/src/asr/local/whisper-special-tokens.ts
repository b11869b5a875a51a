import { EngineError } from '../../contracts';
import type { ByteLevelBpeTokenizer } from './byte-level-bpe-tokenizer';
import type { WhisperModelFolder } from './whisper-model-folder';

/**
 * Whisper's control tokens, read from generation_config.json / config.json with the tokenizer's
 * added tokens as the fallback, never hard-coded (their ids differ between the multilingual and
 * the English-only vocabularies).
 */
export class WhisperSpecialTokens {
  readonly startOfTranscript: number;
  readonly endOfText: number;
  readonly noTimestamps: number | undefined;
  readonly transcribe: number | undefined;
  readonly startOfPrev: number | undefined;
  readonly multilingual: boolean;
  readonly languages: ReadonlyMap<string, number>;
  /** Never chosen while decoding: the config's suppress_tokens and every special token but end-of-text. */
  readonly suppressed: ReadonlySet<number>;
  /** Also never chosen as the first generated token (a lone space or an empty transcript). */
  readonly beginSuppressed: ReadonlySet<number>;
  /** Longest token sequence (prompt + generated) the decoder's positions allow. */
  readonly maxLength: number;

  constructor(
    model: Pick<WhisperModelFolder, 'config' | 'generation' | 'tokenizer'>,
    private readonly engine: string,
  ) {
    const { config, generation, tokenizer } = model;
    const byContent = (content: string): number | undefined => tokenizer.idOf(content);
    const first = (value: number | number[] | undefined): number | undefined => (Array.isArray(value) ? value[0] : value);

    const startOfTranscript = generation.decoder_start_token_id ?? config.decoder_start_token_id ?? byContent('<|startoftranscript|>');
    const endOfText = first(generation.eos_token_id) ?? first(config.eos_token_id) ?? byContent('<|endoftext|>');
    if (startOfTranscript === undefined || endOfText === undefined) {
      throw new EngineError(engine, 'model_missing', 'cannot find <|startoftranscript|> / <|endoftext|> in the config or tokenizer', false);
    }
    this.startOfTranscript = startOfTranscript;
    this.endOfText = endOfText;
    this.noTimestamps = generation.no_timestamps_token_id ?? byContent('<|notimestamps|>');
    this.transcribe = generation.task_to_id?.transcribe ?? byContent('<|transcribe|>');
    this.startOfPrev = generation.prev_sot_token_id ?? byContent('<|startofprev|>');
    this.languages = new Map(
      Object.entries(generation.lang_to_id ?? {}).map(([token, id]) => [token.replace(/^<\|/, '').replace(/\|>$/, ''), id]),
    );
    this.multilingual = generation.is_multilingual ?? this.languages.size > 0;
    this.maxLength = generation.max_length ?? config.max_target_positions ?? 448;

    const suppressed = new Set<number>(generation.suppress_tokens ?? config.suppress_tokens ?? []);
    for (const id of tokenizer.specialTokenIds) if (id !== endOfText) suppressed.add(id);
    this.suppressed = suppressed;
    this.beginSuppressed = new Set(generation.begin_suppress_tokens ?? config.begin_suppress_tokens ?? [endOfText]);
  }

  /**
   * The decoder prompt: [<|startofprev|> previous-text...] <|startoftranscript|> [<|lang|> <|transcribe|>] <|notimestamps|>.
   * English-only models take no language or task token.
   */
  prompt(tokenizer: ByteLevelBpeTokenizer, options: { language?: string; previousText?: string }): number[] {
    const ids: number[] = [];
    const previous = options.previousText?.trim();
    if (previous && this.startOfPrev !== undefined) {
      // Whisper keeps at most half its context for the previous text, newest tokens last.
      const budget = Math.floor(this.maxLength / 2) - 1;
      ids.push(this.startOfPrev, ...tokenizer.encode(` ${previous}`).slice(-budget));
    }
    ids.push(this.startOfTranscript);
    if (this.multilingual) {
      const language = options.language ?? 'en';
      const languageId = this.languages.get(language);
      if (languageId === undefined) {
        throw new EngineError(this.engine, 'bad_request', `language '${language}' is not one this Whisper model knows (${[...this.languages.keys()].join(', ')})`, false);
      }
      ids.push(languageId);
      if (this.transcribe !== undefined) ids.push(this.transcribe);
    }
    if (this.noTimestamps !== undefined) ids.push(this.noTimestamps);
    return ids;
  }
}
