import { basename } from 'node:path';
import { EngineError, type InferenceRuntime, type ModelHandle, type RunContext } from '../contracts';
import { WhisperLogMel } from '../asr/local/features/whisper-log-mel';
import type { EndOfTurnClassifier } from '../turn/end-of-turn-classifier';

export interface SmartTurnClassifierOptions {
  runtime: InferenceRuntime;
  /** The classifier's .onnx file (e.g. MODELS_DIR/smart-turn-v3.2/smart-turn-v3.2-cpu.onnx). */
  modelPath: string;
  /** Engine and runtime model name; default 'smart-turn:<file name>'. */
  name?: string;
  /** Calls whose requests the runtime may run as one batch; default 8. */
  maxBatchRows?: number;
  /**
   * What the model's first output holds: 'probability' (Smart Turn v3: sigmoid inside the graph,
   * whatever the output is called) or 'logit' (sigmoid applied here). Default 'probability'.
   */
  output?: 'probability' | 'logit';
}

const SAMPLE_RATE = 16000;
const WINDOW_SECONDS = 8;

/**
 * Smart Turn-style end-of-turn classifier: the last 8 s of the caller's audio (zero-padded in
 * front when shorter), normalised to zero mean and unit variance, as 80 x 800 Whisper log-mel
 * features -> probability that the turn is complete. Requests from many calls are batched by the
 * runtime (the model takes [batch, 80, 800]).
 */
export class SmartTurnClassifier implements EndOfTurnClassifier {
  private readonly features = new WhisperLogMel({ frames: (WINDOW_SECONDS * SAMPLE_RATE) / 160 });

  private constructor(
    readonly name: string,
    private readonly model: ModelHandle,
    private readonly output: 'probability' | 'logit',
  ) {}

  static async load(options: SmartTurnClassifierOptions): Promise<SmartTurnClassifier> {
    const name = options.name ?? `smart-turn:${basename(options.modelPath, '.onnx')}`;
    const model = await options.runtime.loadModel({ name, path: options.modelPath, maxBatchRows: options.maxBatchRows ?? 8 });
    if (!model.inputNames.includes('input_features') || model.outputNames.length === 0) {
      throw new EngineError(name, 'model_missing', `${options.modelPath} is not a Smart Turn model (inputs: ${model.inputNames.join(', ')})`, false);
    }
    return new SmartTurnClassifier(name, model, options.output ?? 'probability');
  }

  async probability(audio16k: Int16Array, context?: RunContext): Promise<number> {
    const input = this.features.compute(audio16k, { align: 'end', normalize: true });
    let outputs;
    try {
      ({ outputs } = await this.model.run({ input_features: { type: 'float32', data: input, dims: [1, this.features.melBins, this.features.frames] } }, context));
    } catch (error) {
      if (error instanceof EngineError) throw new EngineError(this.name, error.code, error.message, error.retryable, { cause: error });
      throw new EngineError(this.name, 'inference_failed', `end-of-turn model failed: ${String(error)}`, false, { cause: error });
    }
    const value = Number((outputs[this.model.outputNames[0] as string]?.data as Float32Array | undefined)?.[0]);
    if (!Number.isFinite(value)) throw new EngineError(this.name, 'inference_failed', 'end-of-turn model returned no finite value', false);
    const probability = this.output === 'logit' ? 1 / (1 + Math.exp(-value)) : value;
    return Math.min(1, Math.max(0, probability));
  }
}
