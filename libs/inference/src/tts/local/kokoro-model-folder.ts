import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { EngineError } from '../../contracts';

/** Kokoro's style vectors: one 256-float row per input length, 510 rows per voice. */
export const KOKORO_STYLE_DIM = 256;
export const KOKORO_SAMPLE_RATE = 24000;
/** Phoneme tokens one model call takes (512 positions less the two pads). */
export const KOKORO_MAX_PHONEMES = 510;

export interface KokoroModelFolder {
  modelPath: string;
  /** Phoneme character -> token id. */
  vocab: ReadonlyMap<string, number>;
  /** Voice name -> voices/<name>.bin. */
  voices: ReadonlyMap<string, string>;
}

const MODEL_CANDIDATES = ['onnx/model.onnx', 'onnx/model_quantized.onnx', 'model.onnx', 'kokoro-v1.0.onnx'];

/**
 * Reads a Kokoro v1.0 folder in the onnx-community layout: the graph in onnx/ (or the folder),
 * the phoneme vocabulary from config.json `vocab` (hexgrad's layout) or tokenizer.json
 * `model.vocab`, and voices as raw float32 [510, 1, 256] files in voices/*.bin.
 */
export async function readKokoroModelFolder(folder: string, engine: string, modelFile?: string): Promise<KokoroModelFolder> {
  const missing = (what: string): EngineError => new EngineError(engine, 'model_missing', `Kokoro model folder ${folder}: ${what}`, false);
  const modelPath = modelFile ? join(folder, modelFile) : MODEL_CANDIDATES.map((file) => join(folder, file)).find((path) => existsSync(path));
  if (!modelPath || !existsSync(modelPath)) throw missing(`no model file (${modelFile ?? MODEL_CANDIDATES.join(', ')})`);

  const vocab = (await vocabFrom(join(folder, 'config.json'), (json) => json.vocab)) ?? (await vocabFrom(join(folder, 'tokenizer.json'), (json) => json.model?.vocab));
  if (!vocab || vocab.size === 0) throw missing('no phoneme vocabulary (config.json "vocab" or tokenizer.json model.vocab)');

  const voicesDir = join(folder, 'voices');
  const voiceFiles = existsSync(voicesDir) ? (await readdir(voicesDir)).filter((file) => file.endsWith('.bin')) : [];
  if (voiceFiles.length === 0) throw missing('no voices/*.bin');
  const voices = new Map(voiceFiles.map((file) => [basename(file, '.bin'), join(voicesDir, file)]));
  return { modelPath, vocab, voices };
}

/** Loads one voice file: float32 rows of 256, one per input length. */
export async function readKokoroVoice(path: string, engine: string): Promise<Float32Array> {
  const bytes = await readFile(path);
  const rowBytes = KOKORO_STYLE_DIM * 4;
  if (bytes.byteLength === 0 || bytes.byteLength % rowBytes !== 0) {
    throw new EngineError(engine, 'model_missing', `${path}: ${bytes.byteLength} bytes is not a whole number of 256-float style rows`, false);
  }
  // Copy into an aligned buffer: a Buffer's offset into Node's pool need not be 4-byte aligned.
  const voice = new Float32Array(bytes.byteLength / 4);
  new Uint8Array(voice.buffer).set(bytes);
  return voice;
}

interface VocabJson {
  vocab?: Record<string, number>;
  model?: { vocab?: Record<string, number> };
}

async function vocabFrom(path: string, pick: (json: VocabJson) => Record<string, number> | undefined): Promise<Map<string, number> | undefined> {
  if (!existsSync(path)) return undefined;
  let json: VocabJson;
  try {
    json = JSON.parse(await readFile(path, 'utf8')) as VocabJson;
  } catch {
    return undefined;
  }
  const vocab = pick(json);
  return vocab ? new Map(Object.entries(vocab)) : undefined;
}
