import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { EngineError } from '../../contracts';

/** The fields of a Piper `<voice>.onnx.json` the engine reads. */
export interface PiperVoiceConfigJson {
  audio?: { sample_rate?: number; quality?: string };
  espeak?: { voice?: string };
  inference?: { noise_scale?: number; length_scale?: number; noise_w?: number };
  phoneme_type?: string;
  phoneme_id_map?: Record<string, number[]>;
  num_speakers?: number;
  speaker_id_map?: Record<string, number>;
}

export interface PiperVoice {
  modelPath: string;
  sampleRate: number;
  espeakVoice: string;
  phonemeIds: ReadonlyMap<string, readonly number[]>;
  noiseScale: number;
  lengthScale: number;
  noiseW: number;
  speakers: ReadonlyMap<string, number>;
  multiSpeaker: boolean;
}

const PAD = '_';
const BOS = '^';
const EOS = '$';

/**
 * Reads a Piper voice: `<voice>.onnx` next to `<voice>.onnx.json`. `path` is the .onnx file, or a
 * folder holding exactly one .onnx with its .json.
 */
export async function readPiperVoice(path: string, engine: string): Promise<PiperVoice> {
  const missing = (what: string): EngineError => new EngineError(engine, 'model_missing', `Piper voice ${path}: ${what}`, false);
  let modelPath = path;
  if (!path.endsWith('.onnx')) {
    const onnxFiles = existsSync(path) ? (await readdir(path)).filter((file) => file.endsWith('.onnx')) : [];
    if (onnxFiles.length !== 1) throw missing(`expected one .onnx file in the folder, found ${onnxFiles.length}`);
    modelPath = join(path, onnxFiles[0]!);
  }
  if (!existsSync(modelPath)) throw missing('model file not found');
  const configPath = `${modelPath}.json`;
  if (!existsSync(configPath)) throw missing(`no ${configPath}`);
  let config: PiperVoiceConfigJson;
  try {
    config = JSON.parse(await readFile(configPath, 'utf8')) as PiperVoiceConfigJson;
  } catch (cause) {
    throw new EngineError(engine, 'model_missing', `${configPath} is not valid JSON`, false, { cause });
  }
  const sampleRate = config.audio?.sample_rate;
  const idMap = config.phoneme_id_map;
  if (!sampleRate || !idMap || !idMap[PAD] || !idMap[BOS] || !idMap[EOS]) {
    throw missing('config lacks audio.sample_rate or a phoneme_id_map with "_", "^" and "$"');
  }
  const numSpeakers = config.num_speakers ?? 1;
  return {
    modelPath,
    sampleRate,
    espeakVoice: config.espeak?.voice ?? 'en-us',
    phonemeIds: new Map(Object.entries(idMap)),
    noiseScale: config.inference?.noise_scale ?? 0.667,
    lengthScale: config.inference?.length_scale ?? 1,
    noiseW: config.inference?.noise_w ?? 0.8,
    speakers: new Map(Object.entries(config.speaker_id_map ?? {})),
    multiSpeaker: numSpeakers > 1,
  };
}

/**
 * Phonemes -> Piper ids as piper-phonemize does it: BOS, then each phoneme followed by the pad
 * id, then EOS. Phonemes outside the map are skipped.
 */
export function piperPhonemeIds(voice: PiperVoice, phonemes: string): number[] {
  const map = voice.phonemeIds;
  const pad = map.get(PAD)!;
  const ids = [...map.get(BOS)!, ...pad];
  for (const phoneme of phonemes.normalize('NFD')) {
    const phonemeIds = map.get(phoneme);
    if (phonemeIds) ids.push(...phonemeIds, ...pad);
  }
  ids.push(...map.get(EOS)!);
  return ids;
}
