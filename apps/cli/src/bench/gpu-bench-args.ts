/** The `npm run bench:gpu` command line. */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';

export const GPU_BENCH_MODELS = ['vad', 'smart-turn', 'whisper', 'kokoro', 'piper', 'llm'] as const;
export type GpuBenchModel = (typeof GPU_BENCH_MODELS)[number];

/**
 * The devices the bench accepts. 'webgpu' is taken here ahead of the runtime: the runtime's own
 * option check decides whether it is supported, and its refusal is reported as a failure (exit 1).
 */
export const GPU_BENCH_DEVICES = ['auto', 'cpu', 'cuda', 'webgpu'] as const;
export type GpuBenchDevice = (typeof GPU_BENCH_DEVICES)[number];

export interface GpuBenchArgs {
  device: GpuBenchDevice;
  models: GpuBenchModel[];
  batches: number[];
  budgetMs: number;
  seconds: number;
  modelsDir: string;
  /** The numeric variant every model is asked for (INFERENCE_MODEL_PRECISION for all). */
  precision: 'fp32' | 'fp16' | 'int8';
  /** Worker threads (one intra-op thread each); unset: the runtime's default, min(2, cores). */
  workers: number | undefined;
}

export const GPU_BENCH_USAGE =
  'usage: npm run bench:gpu -- [--device auto|cpu|cuda|webgpu (default cpu)] ' +
  `[--models ${GPU_BENCH_MODELS.join(',')} (default all but llm)] [--batches 1,4,16] [--budget-ms 500] ` +
  '[--seconds 1.5 (per measurement)] [--models-dir data/stand-in-models/realistic] ' +
  '[--precision fp32|fp16|int8 (default fp32; int8 stand-ins are built for whisper and llm)] ' +
  '[--workers N (CPU cores used; default min(2, cores); WebGPU always runs 1)]';

export class UsageError extends Error {}

export function parseGpuBenchArgs(argv: readonly string[]): GpuBenchArgs | 'help' {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        device: { type: 'string', default: 'cpu' },
        models: { type: 'string', default: GPU_BENCH_MODELS.filter((model) => model !== 'llm').join(',') },
        batches: { type: 'string', default: '1,4,16' },
        'budget-ms': { type: 'string', default: '500' },
        seconds: { type: 'string', default: '1.5' },
        'models-dir': { type: 'string', default: 'data/stand-in-models/realistic' },
        precision: { type: 'string', default: 'fp32' },
        workers: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  if (values.help) return 'help';
  if (!(GPU_BENCH_DEVICES as readonly string[]).includes(values.device)) throw new UsageError(`--device must be one of ${GPU_BENCH_DEVICES.join(', ')}, got ${values.device}`);
  const models = list(values.models);
  const unknown = models.filter((model) => !(GPU_BENCH_MODELS as readonly string[]).includes(model));
  if (models.length === 0 || unknown.length > 0) throw new UsageError(`--models takes ${GPU_BENCH_MODELS.join(', ')}; got ${values.models}`);
  const batches = list(values.batches).map(Number);
  if (batches.length === 0 || batches.some((batch) => !Number.isInteger(batch) || batch < 1 || batch > 1024)) {
    throw new UsageError(`--batches takes integers from 1 to 1024, got ${values.batches}`);
  }
  if (!['fp32', 'fp16', 'int8'].includes(values.precision)) throw new UsageError(`--precision must be fp32, fp16 or int8, got ${values.precision}`);
  return {
    device: values.device as GpuBenchDevice,
    models: [...new Set(models)] as GpuBenchModel[],
    batches: [...new Set(batches)].sort((a, b) => a - b),
    budgetMs: positive('--budget-ms', values['budget-ms']),
    seconds: positive('--seconds', values.seconds),
    modelsDir: resolve(values['models-dir']),
    precision: values.precision as GpuBenchArgs['precision'],
    workers: values.workers === undefined ? undefined : positiveInteger('--workers', values.workers),
  };
}

function list(value: string): string[] {
  return value.split(',').map((item) => item.trim()).filter(Boolean);
}

function positive(flag: string, value: string): number {
  const number = Number(value);
  if (!Number.isFinite(number) || number <= 0) throw new UsageError(`${flag} must be a number > 0, got ${value}`);
  return number;
}

function positiveInteger(flag: string, value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1 || number > 256) throw new UsageError(`${flag} must be an integer from 1 to 256, got ${value}`);
  return number;
}
