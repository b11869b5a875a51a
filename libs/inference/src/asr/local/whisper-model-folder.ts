import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { EngineError } from '../../contracts';
import { ByteLevelBpeTokenizer } from './byte-level-bpe-tokenizer';

/** The config.json fields the engine reads (Hugging Face WhisperConfig). */
export interface WhisperConfigJson {
  model_type?: string;
  d_model?: number;
  decoder_layers?: number;
  decoder_attention_heads?: number;
  num_mel_bins?: number;
  max_target_positions?: number;
  decoder_start_token_id?: number;
  eos_token_id?: number | number[];
  suppress_tokens?: number[];
  begin_suppress_tokens?: number[];
}

/** The generation_config.json fields the engine reads. */
export interface WhisperGenerationConfigJson {
  decoder_start_token_id?: number;
  eos_token_id?: number | number[];
  is_multilingual?: boolean;
  lang_to_id?: Record<string, number>;
  task_to_id?: Record<string, number>;
  no_timestamps_token_id?: number;
  prev_sot_token_id?: number;
  max_length?: number;
  suppress_tokens?: number[];
  begin_suppress_tokens?: number[];
}

export interface WhisperPreprocessorJson {
  feature_size?: number;
  sampling_rate?: number;
  hop_length?: number;
  n_fft?: number;
  nb_max_frames?: number;
}

export type WhisperDecoderLayout = 'merged' | 'no-cache';

export interface WhisperModelFolder {
  folder: string;
  encoderPath: string;
  decoderPath: string;
  decoderLayout: WhisperDecoderLayout;
  config: WhisperConfigJson;
  generation: WhisperGenerationConfigJson;
  preprocessor: WhisperPreprocessorJson;
  tokenizer: ByteLevelBpeTokenizer;
  decoderLayers: number;
  decoderHeads: number;
  headDim: number;
}

/**
 * Reads a Whisper model folder in the Hugging Face ONNX layout. ONNX files are looked for in
 * `onnx/` (transformers.js / onnx-community) and then in the folder itself (optimum-cli export);
 * the merged KV-cache decoder is preferred over the plain one. `fileSuffix` picks a variant such
 * as '_quantized' (onnx/encoder_model_quantized.onnx). Anything missing is a non-retryable
 * EngineError naming the file.
 */
export async function readWhisperModelFolder(folder: string, engine: string, fileSuffix = ''): Promise<WhisperModelFolder> {
  const missing = (what: string): EngineError =>
    new EngineError(engine, 'model_missing', `Whisper model folder ${folder}: ${what}`, false);
  const findOnnx = (base: string): string | undefined =>
    [join(folder, 'onnx', `${base}${fileSuffix}.onnx`), join(folder, `${base}${fileSuffix}.onnx`)].find((path) => existsSync(path));

  const encoderPath = findOnnx('encoder_model');
  if (!encoderPath) throw missing(`no encoder_model${fileSuffix}.onnx (looked in onnx/ and the folder)`);
  const mergedPath = findOnnx('decoder_model_merged');
  const plainPath = findOnnx('decoder_model');
  const decoderPath = mergedPath ?? plainPath;
  if (!decoderPath) throw missing(`no decoder_model_merged${fileSuffix}.onnx or decoder_model${fileSuffix}.onnx`);

  const config = await readJson<WhisperConfigJson>(join(folder, 'config.json'), engine, true);
  const generation = (await readJson<WhisperGenerationConfigJson>(join(folder, 'generation_config.json'), engine, false)) ?? {};
  const preprocessor = (await readJson<WhisperPreprocessorJson>(join(folder, 'preprocessor_config.json'), engine, false)) ?? {};
  const tokenizerPath = join(folder, 'tokenizer.json');
  if (!existsSync(tokenizerPath)) throw missing('no tokenizer.json');
  const tokenizer = ByteLevelBpeTokenizer.fromJson(await readFile(tokenizerPath, 'utf8'), engine);

  const decoderLayers = config?.decoder_layers;
  const decoderHeads = config?.decoder_attention_heads;
  const dModel = config?.d_model;
  if (!config || !decoderLayers || !decoderHeads || !dModel || dModel % decoderHeads !== 0) {
    throw missing('config.json lacks d_model / decoder_layers / decoder_attention_heads');
  }
  return {
    folder,
    encoderPath,
    decoderPath,
    decoderLayout: mergedPath ? 'merged' : 'no-cache',
    config,
    generation,
    preprocessor,
    tokenizer,
    decoderLayers,
    decoderHeads,
    headDim: dModel / decoderHeads,
  };
}

async function readJson<T>(path: string, engine: string, required: true): Promise<T>;
async function readJson<T>(path: string, engine: string, required: false): Promise<T | undefined>;
async function readJson<T>(path: string, engine: string, required: boolean): Promise<T | undefined> {
  if (!existsSync(path)) {
    if (required) throw new EngineError(engine, 'model_missing', `missing ${path}`, false);
    return undefined;
  }
  try {
    return JSON.parse(await readFile(path, 'utf8')) as T;
  } catch (cause) {
    throw new EngineError(engine, 'model_missing', `${path} is not valid JSON`, false, { cause });
  }
}
