import { buildByteLevelVocabulary, readableTokenIdsBelow } from './byte-level-vocabulary';
import { SeededRandom } from './seeded-random';

/**
 * The stand-in Whisper vocabulary, laid out like the real multilingual one: byte tokens, BPE merges
 * (learned here from a short English corpus), then the special tokens in Whisper's order
 * (<|endoftext|>, <|startoftranscript|>, one per language, <|translate|>, <|transcribe|>,
 * <|startoflm|>, <|startofprev|>, <|nospeech|>, <|notimestamps|>, timestamps). At the realistic
 * size the ids are exactly whisper-base's (eot 50257 ... vocab 51865).
 */

/** Whisper's language tokens, in token-id order. */
export const WHISPER_LANGUAGES: readonly string[] = (
  'en zh de es ru ko fr ja pt tr pl ca nl ar sv it id hi fi vi he uk el ms cs ro da hu ta no th ur hr bg lt la mi ml cy sk ' +
  'te fa lv bn sr az sl kn et mk br eu is hy ne mn bs kk sq sw gl mr pa si km sn yo so af oc ka be tg sd gu am yi lo uz ' +
  'fo ht ps tk nn mt sa lb my bo tl mg as tt haw ln ha ba jw su'
).split(' ');

const CORPUS =
  'hi i am calling about my order. the order number is four five six seven. please transfer me to someone in billing. ' +
  'wait, stop. i have a different question. that is all. thank you, goodbye. what time do you open tomorrow morning? ' +
  'can you tell me the status of my account? i would like to speak with an agent about the payment on my card. ' +
  'yes, that is right. no, thank you. could you repeat that please? the delivery was late and the box was damaged.';

export interface WhisperVocabularyOptions {
  merges: number;
  /** Regular (non-special) tokens in total; filler words pad the vocab up to it (realistic size). */
  regularTokens?: number;
  languages: number;
  timestampTokens: number;
}

export interface WhisperVocabulary {
  tokenizerJson: object;
  vocabSize: number;
  ids: {
    endOfText: number;
    startOfTranscript: number;
    languages: Record<string, number>;
    translate: number;
    transcribe: number;
    startOfLm: number;
    startOfPrev: number;
    noSpeech: number;
    noTimestamps: number;
  };
  /** Regular tokens whose bytes are plain English letters, spaces or punctuation. */
  readableTokenIds: number[];
}

export function buildWhisperVocabulary(options: WhisperVocabularyOptions): WhisperVocabulary {
  const { vocab, tokens, merges, add } = buildByteLevelVocabulary(CORPUS, options.merges, { existingMergeTokens: 'add' });
  const random = new SeededRandom(50257);
  while (options.regularTokens !== undefined && tokens.length < options.regularTokens) {
    const word = '\u0120' + Array.from({ length: 3 + random.int(5) }, () => String.fromCharCode(97 + random.int(26))).join('');
    if (vocab[word] === undefined) add(word);
  }

  const addedTokens: Array<{ id: number; content: string; special: boolean }> = [];
  const special = (content: string): number => {
    const id = tokens.length;
    tokens.push(content);
    addedTokens.push({ id, content, special: true });
    return id;
  };
  const endOfText = special('<|endoftext|>');
  const startOfTranscript = special('<|startoftranscript|>');
  const languages: Record<string, number> = {};
  for (const code of WHISPER_LANGUAGES.slice(0, options.languages)) languages[code] = special(`<|${code}|>`);
  const translate = special('<|translate|>');
  const transcribe = special('<|transcribe|>');
  const startOfLm = special('<|startoflm|>');
  const startOfPrev = special('<|startofprev|>');
  const noSpeech = special('<|nospeech|>');
  const noTimestamps = special('<|notimestamps|>');
  for (let i = 0; i < options.timestampTokens; i++) special(`<|${(i * 0.02).toFixed(2)}|>`);

  const readableTokenIds = readableTokenIdsBelow(tokens, endOfText);

  const tokenizerJson = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: addedTokens.map((t) => ({ ...t, single_word: false, lstrip: false, rstrip: false, normalized: false })),
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: '',
      end_of_word_suffix: '',
      fuse_unk: false,
      vocab,
      merges: merges.map(([left, right]) => `${left} ${right}`),
    },
  };
  return {
    tokenizerJson,
    vocabSize: tokens.length,
    ids: { endOfText, startOfTranscript, languages, translate, transcribe, startOfLm, startOfPrev, noSpeech, noTimestamps },
    readableTokenIds,
  };
}
