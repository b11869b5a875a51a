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
