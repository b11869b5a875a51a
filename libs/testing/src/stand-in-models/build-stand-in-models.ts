import { join } from 'node:path';
import { writeDecoderLlmStandIn } from './decoder-llm.stand-in';
import { writeKokoroStandIn } from './kokoro-stand-in';
import { writePiperStandIn } from './piper-stand-in';
import { writeSmartTurnStandIn } from './smart-turn-stand-in';
import type { StandInSize } from './whisper-dimensions';
import { writeWhisperStandIn } from './whisper-stand-in';

export type StandInModelName = 'whisper' | 'kokoro' | 'piper' | 'smart-turn' | 'llm';
export const STAND_IN_MODEL_NAMES: readonly StandInModelName[] = ['whisper', 'kokoro', 'piper', 'smart-turn', 'llm'];

/** Where each stand-in lands inside the output folder, in its family's standard layout. */
export interface StandInModelPaths {
  /** Whisper folder (config/tokenizer JSON + onnx/). */
  whisper: string;
  /** Kokoro folder (config.json, onnx/model.onnx, voices/). */
  kokoro: string;
  /** Piper voice .onnx (its .onnx.json beside it). */
  piper: string;
  /** Smart Turn classifier .onnx. */
  smartTurn: string;
  /** Decoder-only chat LLM folder (Qwen2.5-style config/tokenizer JSON + onnx/model.onnx). */
  llm: string;
}

export function standInModelPaths(outputDir: string): StandInModelPaths {
  return {
    whisper: join(outputDir, 'whisper-stand-in'),
    kokoro: join(outputDir, 'kokoro-stand-in'),
    piper: join(outputDir, 'piper-stand-in', 'en_US-stand-in-medium.onnx'),
    smartTurn: join(outputDir, 'smart-turn-stand-in', 'smart-turn-stand-in.onnx'),
    llm: join(outputDir, 'decoder-llm-stand-in'),
  };
}

export interface BuildStandInOptions {
  size?: StandInSize;
  models?: readonly StandInModelName[];
  /** Also write int8 variants where the stand-in has them (Whisper, the LLM). */
  int8?: boolean;
}

/** The stand-ins that can write an int8 variant beside their fp32 files. */
export const INT8_STAND_INS: readonly StandInModelName[] = ['whisper', 'llm'];

/**
 * Builds stand-in ONNX models with the real models' input/output signatures and file layouts,
 * so the real loading code and real onnxruntime sessions can be tested without weights.
 */
export async function buildStandInModels(outputDir: string, options: BuildStandInOptions = {}): Promise<StandInModelPaths> {
  const paths = standInModelPaths(outputDir);
  const size = options.size ?? 'small';
  const models = new Set(options.models ?? STAND_IN_MODEL_NAMES);
  const int8 = options.int8 ?? false;
  if (models.has('whisper')) await writeWhisperStandIn(paths.whisper, { size, int8 });
  if (models.has('kokoro')) await writeKokoroStandIn(paths.kokoro, { size });
  if (models.has('piper')) await writePiperStandIn(paths.piper, { size });
  if (models.has('smart-turn')) await writeSmartTurnStandIn(paths.smartTurn, { size });
  if (models.has('llm')) await writeDecoderLlmStandIn(paths.llm, { size, int8 });
  return paths;
}
