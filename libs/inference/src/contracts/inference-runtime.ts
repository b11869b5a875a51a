import type { InferenceDevice } from './compute-usage';
import type { TensorData } from './tensor';

/** How a model is loaded: one onnxruntime session per model per worker, shared by every call. */
export interface ModelLoadSpec {
  /** Registry name, e.g. 'silero-vad', 'whisper-base.en/encoder'. */
  name: string;
  /** Absolute path to the .onnx file. */
  path: string;
  /** Batch rows gathered by the micro-batching scheduler for this model (1: no batching). */
  maxBatchRows?: number;
  /**
   * Which axis of each input and output is the batch axis, for models whose batch axis is not 0
   * (Silero's `state` is [2, B, 128]). Absent: every input and output batches along axis 0. When
   * given, an input not listed is shared by the whole batch (e.g. Silero's `sr` scalar): requests
   * are batched together only when their shared inputs are equal.
   */
  batchAxes?: { inputs: Record<string, number>; outputs: Record<string, number> };
  /**
   * Steps of different calls' sequences (decoder tokens, see ModelSequence) that reach one worker
   * together run as one batch of up to `maxRows` rows, joined along `batchAxes` (required: it says
   * which inputs, like Whisper's `use_cache_branch`, are shared and must be equal). By default a
   * step joins only steps whose state has the same shape (equal past lengths). `leftPadded` lets
   * sequences of different lengths join: the named inputs (input -> axis: KV caches along their
   * sequence axis, the attention mask) get zeros in front up to the longest; only for models that
   * mask those positions through an input like `attention_mask`. Absent: every step runs alone.
   */
  sequenceBatching?: { maxRows: number; leftPadded?: Record<string, number> };
  /**
   * For batching that depends on the graph (an LLM export may or may not take `position_ids`):
   * called once the model is loaded, with its input and output names; what it returns replaces
   * `batchAxes` and `sequenceBatching`.
   */
  batchingFor?: (signature: { inputs: readonly string[]; outputs: readonly string[] }) => Pick<ModelLoadSpec, 'batchAxes' | 'sequenceBatching'>;
}

/** Per-run context: which call the work is for (for usage accounting and cancellation). */
export interface RunContext {
  callId?: string;
  signal?: AbortSignal;
}

export interface ModelRunResult {
  outputs: Record<string, TensorData>;
  queueWaitMs: number;
  runMs: number;
}

/** What one step of a sequence keeps where the model runs, instead of posting it back. */
export interface SequenceStepSpec {
  /** Outputs that become the next step's inputs (output name -> input name). */
  carry?: Record<string, string>;
  /** Inputs fed in this step and kept for the later ones (fed once). */
  retain?: readonly string[];
  /** Outputs not wanted at all (a graph's placeholders). */
  discard?: readonly string[];
}

/**
 * A stateful run of one model for one caller (a decoder generating tokens): what a step carries
 * (KV caches) and retains (encoder states) stays in the worker thread, so a token costs its own
 * inputs and wanted outputs, not the whole cache twice. Steps run one at a time, in order.
 * `close` frees the worker's copy; a sequence left open is dropped by the worker when idle.
 */
export interface ModelSequence {
  /** Inputs the worker holds for this sequence now: a step needs not feed them. */
  readonly heldInputs: ReadonlySet<string>;
  step(feeds: Record<string, TensorData>, spec: SequenceStepSpec, context?: RunContext): Promise<ModelRunResult>;
  close(): Promise<void>;
}

/** A loaded model. `run` executes in a worker thread, never on the caller's event loop. */
export interface ModelHandle {
  readonly name: string;
  readonly device: InferenceDevice;
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  run(feeds: Record<string, TensorData>, context?: RunContext): Promise<ModelRunResult>;
  /** Stateful runs whose state stays where the model runs (absent: the caller carries the state). */
  openSequence?(): ModelSequence;
}

/** Hosts onnxruntime sessions off the event loop; chooses the execution provider at load. */
export interface InferenceRuntime {
  readonly device: InferenceDevice;
  loadModel(spec: ModelLoadSpec): Promise<ModelHandle>;
  close(): Promise<void>;
}
