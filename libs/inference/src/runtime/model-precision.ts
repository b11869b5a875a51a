/**
 * Which numeric variant of a model file a load uses (INFERENCE_MODEL_PRECISION). The Hub's ONNX
 * exports (optimum, onnx-community / transformers.js) publish variants beside the full-precision
 * file: `encoder_model_fp16.onnx`, `model_int8.onnx` or `model_quantized.onnx` (dynamically
 * quantized int8). A variant is used only where the model's provider runs it as intended, and
 * only when its file is there; otherwise the fp32 file runs and one line says why.
 */
import { basename } from 'node:path';
import type { InferenceDevice } from '../contracts';
import { PROVIDER_LABELS } from './execution-provider';

export const MODEL_PRECISIONS = ['fp32', 'fp16', 'int8'] as const;
export type ModelPrecision = (typeof MODEL_PRECISIONS)[number];

/** File-name suffixes of each variant as the Hub's exports name them, tried in this order. */
export const PRECISION_FILE_SUFFIXES: Readonly<Record<ModelPrecision, readonly string[]>> = {
  fp32: [''],
  fp16: ['_fp16'],
  int8: ['_int8', '_quantized'],
};

/**
 * Why a provider does not run a variant as intended (absent: it does).
 * - fp16 on CPU: onnxruntime's CPU provider has float16 kernels for few operators and runs the
 *   rest through inserted casts to float32, so the fp16 file is slower there than the fp32 one.
 * - int8 on a GPU: dynamic quantization (DynamicQuantizeLinear, MatMulInteger) is made for CPUs;
 *   the GPU providers lack kernels for part of it, which then runs on the CPU with copies both ways
 *   on every layer.
 */
const NOT_RUN_AS_INTENDED: Readonly<Record<ModelPrecision, Partial<Record<InferenceDevice, string>>>> = {
  fp32: {},
  fp16: { cpu: 'the CPU provider runs most float16 operators through casts to float32, slower than the fp32 file' },
  int8: {
    cuda: 'dynamically quantized graphs are made for CPUs: CUDA lacks kernels for part of them (DynamicQuantizeLinear), which would run on the CPU with copies every layer',
    webgpu: 'dynamically quantized graphs are made for CPUs: WebGPU lacks kernels for part of them (DynamicQuantizeLinear, MatMulInteger), which would run on the CPU with copies every layer',
  },
};

/** A requested variant that could not be used, and why (what /health/ready lists). */
export interface PrecisionFallback {
  model: string;
  requested: ModelPrecision;
  precision: 'fp32';
  reason: string;
}

export interface PrecisionChoice {
  path: string;
  precision: ModelPrecision;
  fallback?: PrecisionFallback;
}

/** The file to load for `requested` on `device`: its variant where that runs and exists, else `path`. */
export function choosePrecision(
  model: string,
  path: string,
  requested: ModelPrecision | undefined,
  device: InferenceDevice,
  exists: (path: string) => boolean,
): PrecisionChoice {
  if (requested === undefined || requested === 'fp32') return { path, precision: 'fp32' };
  const fallBack = (reason: string): PrecisionChoice => ({ path, precision: 'fp32', fallback: { model, requested, precision: 'fp32', reason } });
  const unfit = NOT_RUN_AS_INTENDED[requested][device];
  if (unfit) return fallBack(`${requested} on ${PROVIDER_LABELS[device]}: ${unfit}`);
  const candidates = PRECISION_FILE_SUFFIXES[requested].map((suffix) => variantPath(path, suffix));
  const found = candidates.find((candidate) => exists(candidate));
  if (found) return { path: found, precision: requested };
  return fallBack(`no ${requested} variant beside ${basename(path)} (looked for ${candidates.map((candidate) => basename(candidate)).join(', ')})`);
}

/** `onnx/encoder_model.onnx` with suffix `_int8` -> `onnx/encoder_model_int8.onnx`. */
export function variantPath(path: string, suffix: string): string {
  return path.endsWith('.onnx') ? `${path.slice(0, -'.onnx'.length)}${suffix}.onnx` : `${path}${suffix}`;
}

/** The line logged when a variant falls back. */
export function precisionFallbackLine(fallback: PrecisionFallback, path: string): string {
  return `inference: model '${fallback.model}' asks for ${fallback.requested} (INFERENCE_MODEL_PRECISION), but ${fallback.reason}: running ${basename(path)} (fp32)`;
}
