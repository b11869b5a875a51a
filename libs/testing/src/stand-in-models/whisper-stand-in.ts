import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buildWhisperDecoder, type WhisperDecoderVariant } from './whisper-decoder-graph';
import { WHISPER_DIMENSIONS, type StandInSize } from './whisper-dimensions';
import { buildWhisperEncoder } from './whisper-encoder-graph';
import type { StandInPrecision } from './stand-in-layers';
import { buildWhisperVocabulary } from './whisper-vocabulary';

export interface WhisperStandInOptions {
  size?: StandInSize;
  seed?: number;
  /** Which decoder files to write; optimum writes the merged one, older exports the plain one. */
  decoders?: readonly WhisperDecoderVariant[];
  /** Also write each ONNX file's int8 variant (`*_int8.onnx`): the same weights, dynamically quantized. */
  int8?: boolean;
}

/**
 * Writes a stand-in Whisper model folder in the Hugging Face ONNX layout (optimum /
 * transformers.js): config.json, generation_config.json, preprocessor_config.json, tokenizer.json,
 * onnx/encoder_model.onnx, onnx/decoder_model_merged.onnx (and/or onnx/decoder_model.onnx).
 */
export async function writeWhisperStandIn(folder: string, options: WhisperStandInOptions = {}): Promise<void> {
  const dims = WHISPER_DIMENSIONS[options.size ?? 'small'];
  const seed = options.seed ?? 1;
  const vocabulary = buildWhisperVocabulary(dims);
  const { ids } = vocabulary;
  const tokenId = (token: string): number => {
    const id = (vocabulary.tokenizerJson as { model: { vocab: Record<string, number> } }).model.vocab[token];
    if (id === undefined) throw new Error(`stand-in vocabulary lacks "${token}"`);
    return id;
  };
  const space = tokenId('\u0120');
  const suppressTokens = [...'"#()*+/:;<=>@[\\]^_`{|}~'].map(tokenId);

  const config = {
    _name_or_path: `switchboard/whisper-stand-in-${options.size ?? 'small'}`,
    architectures: ['WhisperForConditionalGeneration'],
    model_type: 'whisper',
    d_model: dims.dModel,
    encoder_layers: dims.encoderLayers,
    decoder_layers: dims.decoderLayers,
    encoder_attention_heads: dims.heads,
    decoder_attention_heads: dims.heads,
    encoder_ffn_dim: dims.ffnDim,
    decoder_ffn_dim: dims.ffnDim,
    num_mel_bins: dims.melBins,
    max_source_positions: dims.sourcePositions,
    max_target_positions: dims.targetPositions,
    vocab_size: vocabulary.vocabSize,
    bos_token_id: ids.endOfText,
    eos_token_id: ids.endOfText,
    pad_token_id: ids.endOfText,
    decoder_start_token_id: ids.startOfTranscript,
    begin_suppress_tokens: [space, ids.endOfText],
    suppress_tokens: suppressTokens,
  };
  const generationConfig = {
    begin_suppress_tokens: [space, ids.endOfText],
    bos_token_id: ids.endOfText,
    decoder_start_token_id: ids.startOfTranscript,
    eos_token_id: ids.endOfText,
    pad_token_id: ids.endOfText,
    forced_decoder_ids: [[1, null], [2, ids.transcribe]],
    is_multilingual: true,
    lang_to_id: Object.fromEntries(Object.entries(ids.languages).map(([code, id]) => [`<|${code}|>`, id])),
    task_to_id: { translate: ids.translate, transcribe: ids.transcribe },
    no_timestamps_token_id: ids.noTimestamps,
    prev_sot_token_id: ids.startOfPrev,
    max_initial_timestamp_index: 50,
    max_length: dims.targetPositions,
    return_timestamps: false,
    suppress_tokens: suppressTokens,
  };
  const preprocessorConfig = {
    chunk_length: 30,
    feature_extractor_type: 'WhisperFeatureExtractor',
    feature_size: dims.melBins,
    hop_length: 160,
    n_fft: 400,
    n_samples: 480000,
    nb_max_frames: dims.sourcePositions * 2,
    padding_side: 'right',
    padding_value: 0.0,
    processor_class: 'WhisperProcessor',
    return_attention_mask: false,
    sampling_rate: 16000,
  };

  await mkdir(join(folder, 'onnx'), { recursive: true });
  const json = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;
  await writeFile(join(folder, 'config.json'), json(config));
  await writeFile(join(folder, 'generation_config.json'), json(generationConfig));
  await writeFile(join(folder, 'preprocessor_config.json'), json(preprocessorConfig));
  await writeFile(join(folder, 'tokenizer.json'), json(vocabulary.tokenizerJson));
  const precisions: StandInPrecision[] = options.int8 ? ['fp32', 'int8'] : ['fp32'];
  const decoderVocabulary = { size: vocabulary.vocabSize, endOfText: ids.endOfText, readableTokenIds: vocabulary.readableTokenIds };
  for (const precision of precisions) {
    const suffix = precision === 'fp32' ? '' : `_${precision}`;
    await writeFile(join(folder, 'onnx', `encoder_model${suffix}.onnx`), buildWhisperEncoder(dims, seed, precision));
    for (const variant of options.decoders ?? ['merged']) {
      const file = variant === 'merged' ? 'decoder_model_merged' : 'decoder_model';
      await writeFile(join(folder, 'onnx', `${file}${suffix}.onnx`), buildWhisperDecoder(dims, decoderVocabulary, seed, variant, precision));
    }
  }
}
