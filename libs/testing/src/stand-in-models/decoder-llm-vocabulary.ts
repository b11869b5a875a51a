import { buildByteLevelVocabulary, readableTokenIdsBelow } from './byte-level-vocabulary';

/**
 * The stand-in chat LLM's tokenizer.json, laid out like Qwen2.5's: byte tokens, BPE merges
 * (learned here from a short contact-center corpus plus Qwen's tool instructions, so prompts
 * compress to realistic token counts), then the added tokens in Qwen's order: <|endoftext|>,
 * <|im_start|>, <|im_end|> (special) and <tool_call>, </tool_call> (added, not special). The
 * normalizer and pre-tokenizer are Qwen's: NFC, its Split regex, ByteLevel without a regex.
 */

/** Qwen2's pre-tokenizer regex, as its tokenizer.json writes it (Rust syntax, with a (?i:) group). */
export const QWEN2_SPLIT_PATTERN = String.raw`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`;

const CORPUS =
  'hi i am calling about my order. the order number is four five six seven. please transfer me to someone in billing. ' +
  'what time do you open tomorrow morning? can you tell me the status of my account? i would like to speak with an agent. ' +
  'you are a helpful assistant for a contact center. answer in one or two short sentences. let me check that for you. ' +
  'system user assistant tool assistant user system assistant\n' +
  '# Tools\n\nYou may call one or more functions to assist with the user query.\n\n' +
  'You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n' +
  '{"type": "function", "function": {"name": "lookup_order", "description": "Look up an order by its number", ' +
  '"parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}}}\n</tools>\n\n' +
  'For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n' +
  '{"name": <function-name>, "arguments": <args-json-object>}\n' +
  '{"name": "lookup_order", "arguments": {"order_id": "4567"}}\n';

export interface DecoderLlmVocabulary {
  tokenizerJson: object;
  /** Tokens in tokenizer.json (the model's vocab_size pads this up). */
  tokenizerSize: number;
  ids: { endOfText: number; imStart: number; imEnd: number; toolCallOpen: number; toolCallClose: number };
  /** Regular tokens whose bytes are plain English letters, spaces or punctuation. */
  readableTokenIds: number[];
}

export function buildDecoderLlmVocabulary(mergeCount: number): DecoderLlmVocabulary {
  const { vocab, tokens, merges } = buildByteLevelVocabulary(CORPUS, mergeCount, { existingMergeTokens: 'skip' });

  const addedTokens: Array<{ id: number; content: string; special: boolean }> = [];
  const added = (content: string, special: boolean): number => {
    const id = tokens.length;
    tokens.push(content);
    addedTokens.push({ id, content, special });
    return id;
  };
  const endOfText = added('<|endoftext|>', true);
  const imStart = added('<|im_start|>', true);
  const imEnd = added('<|im_end|>', true);
  const toolCallOpen = added('<tool_call>', false);
  const toolCallClose = added('</tool_call>', false);

  const readableTokenIds = readableTokenIdsBelow(tokens, endOfText);

  const tokenizerJson = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: addedTokens.map((token) => ({ ...token, single_word: false, lstrip: false, rstrip: false, normalized: false })),
    normalizer: { type: 'NFC' },
    pre_tokenizer: {
      type: 'Sequence',
      pretokenizers: [
        { type: 'Split', pattern: { Regex: QWEN2_SPLIT_PATTERN }, behavior: 'Isolated', invert: false },
        { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false },
      ],
    },
    post_processor: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false },
    decoder: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: '',
      end_of_word_suffix: '',
      fuse_unk: false,
      byte_fallback: false,
      vocab,
      merges: merges.map(([left, right]) => `${left} ${right}`),
    },
  };
  return { tokenizerJson, tokenizerSize: tokens.length, ids: { endOfText, imStart, imEnd, toolCallOpen, toolCallClose }, readableTokenIds };
}
