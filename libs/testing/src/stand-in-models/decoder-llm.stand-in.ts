import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LlmTokenizer } from '@switchboard/inference';
import { DECODER_LLM_CHAT_TEMPLATES, type DecoderLlmChatTemplate } from './decoder-llm-chat-templates';
import { buildDecoderLlmGraph, type DecoderLlmDimensions } from './decoder-llm-graph';
import { buildDecoderLlmVocabulary } from './decoder-llm-vocabulary';
import type { StandInSize } from './whisper-dimensions';

/** 'realistic' has Qwen2.5-0.5B's cache shape (24 layers, 2 KV heads of 64): the KV traffic of the real model. */
export const DECODER_LLM_DIMENSIONS: Record<StandInSize, DecoderLlmDimensions> = {
  small: { layers: 2, attentionHeads: 4, kvHeads: 2, headDim: 16, hiddenSize: 64, maxPositions: 2048, merges: 320 },
  realistic: { layers: 24, attentionHeads: 14, kvHeads: 2, headDim: 64, hiddenSize: 896, maxPositions: 4096, merges: 320 },
};

/** What the stand-in answers when tools are offered: a sentence, then one scripted call. */
export const DECODER_LLM_TOOL_REPLY = 'Let me check that.<tool_call>\n{"name": "lookup_order", "arguments": {"order_id": "4567"}}\n</tool_call>';

export interface DecoderLlmStandInOptions {
  size?: StandInSize;
  seed?: number;
  /** The chat template written to tokenizer_config.json; default Qwen2.5-0.5B-Instruct's. */
  chatTemplate?: DecoderLlmChatTemplate;
  /** Also write onnx/model_int8.onnx: the same weights, dynamically quantized (see StandInPrecision). */
  int8?: boolean;
}

/**
 * Writes a stand-in decoder-only chat LLM folder in the layout optimum / onnx-community publish
 * for Qwen2.5-Instruct: config.json, generation_config.json, tokenizer.json, tokenizer_config.json
 * (by default with Qwen2.5-0.5B-Instruct's own chat_template) and onnx/model.onnx. With tools in
 * the prompt it replies with DECODER_LLM_TOOL_REPLY; otherwise a few prompt-dependent words (see
 * buildDecoderLlmGraph).
 */
export async function writeDecoderLlmStandIn(folder: string, options: DecoderLlmStandInOptions = {}): Promise<void> {
  const size = options.size ?? 'small';
  const dims = DECODER_LLM_DIMENSIONS[size];
  const vocabulary = buildDecoderLlmVocabulary(dims.merges);
  const { ids } = vocabulary;
  const tokenizerJson = `${JSON.stringify(vocabulary.tokenizerJson, null, 2)}\n`;
  // The script is written in the stand-in's own tokens, as its tokenizer encodes it.
  const tokenizer = LlmTokenizer.fromJson(tokenizerJson, 'decoder-llm-stand-in');
  const vocabSize = Math.ceil(vocabulary.tokenizerSize / 64) * 64;
  const behaviour = {
    vocabSize,
    readableTokenIds: vocabulary.readableTokenIds,
    imStart: ids.imStart,
    endOfTurn: ids.imEnd,
    toolsMarker: ids.toolCallOpen,
    firstReplyStep: tokenizer.encode('assistant\n').length,
    textTokensBeforeEnd: 3,
    toolReply: tokenizer.encode(DECODER_LLM_TOOL_REPLY),
  };
  const model = buildDecoderLlmGraph(dims, behaviour, options.seed ?? 5);

  const config = {
    _name_or_path: `switchboard/decoder-llm-stand-in-${size}`,
    architectures: ['Qwen2ForCausalLM'],
    model_type: 'qwen2',
    hidden_size: dims.hiddenSize,
    num_hidden_layers: dims.layers,
    num_attention_heads: dims.attentionHeads,
    num_key_value_heads: dims.kvHeads,
    head_dim: dims.headDim,
    max_position_embeddings: dims.maxPositions,
    vocab_size: vocabSize,
    bos_token_id: ids.endOfText,
    eos_token_id: ids.imEnd,
    tie_word_embeddings: false,
    torch_dtype: 'float32',
    use_cache: true,
  };
  const generationConfig = {
    bos_token_id: ids.endOfText,
    eos_token_id: [ids.imEnd, ids.endOfText],
    pad_token_id: ids.endOfText,
    do_sample: true,
    temperature: 0.7,
    top_k: 20,
    top_p: 0.8,
    repetition_penalty: 1.05,
  };
  const addedTokensDecoder = Object.fromEntries(
    (vocabulary.tokenizerJson as { added_tokens: Array<{ id: number; content: string; special: boolean }> }).added_tokens.map((token) => [
      String(token.id),
      { content: token.content, lstrip: false, normalized: false, rstrip: false, single_word: false, special: token.special },
    ]),
  );
  const tokenizerConfig = {
    add_bos_token: false,
    add_prefix_space: false,
    added_tokens_decoder: addedTokensDecoder,
    additional_special_tokens: ['<|im_start|>', '<|im_end|>'],
    bos_token: null,
    chat_template: DECODER_LLM_CHAT_TEMPLATES[options.chatTemplate ?? 'qwen2.5'],
    clean_up_tokenization_spaces: false,
    eos_token: '<|im_end|>',
    errors: 'replace',
    model_max_length: dims.maxPositions,
    pad_token: '<|endoftext|>',
    split_special_tokens: false,
    tokenizer_class: 'Qwen2Tokenizer',
    unk_token: null,
  };

  await mkdir(join(folder, 'onnx'), { recursive: true });
  const json = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;
  await writeFile(join(folder, 'config.json'), json(config));
  await writeFile(join(folder, 'generation_config.json'), json(generationConfig));
  await writeFile(join(folder, 'tokenizer.json'), tokenizerJson);
  await writeFile(join(folder, 'tokenizer_config.json'), json(tokenizerConfig));
  await writeFile(join(folder, 'onnx', 'model.onnx'), model);
  if (options.int8) await writeFile(join(folder, 'onnx', 'model_int8.onnx'), buildDecoderLlmGraph(dims, behaviour, options.seed ?? 5, 'int8'));
}
