/**
 * Messages between the runtime (caller's thread) and an inference worker thread. Tensors travel
 * as plain TensorData whose typed-array buffers are transferred, not copied, in both directions.
 */
import type { InferenceDevice, TensorData } from '../contracts';
import type { StepOutcome, StepRunRecord } from './sequence-step-runner';
import type { StepBatching } from './step-batching';

/**
 * Session settings sent with every load, so every worker builds identical sessions. The execution
 * provider travels with each load instead: a pinned model may run on another provider than the rest.
 */
export interface WorkerSessionSettings {
  intraOpNumThreads: number;
  interOpNumThreads: number;
  executionMode: 'sequential' | 'parallel';
  graphOptimizationLevel: 'disabled' | 'basic' | 'extended' | 'all';
}

/**
 * One step of a stateful sequence (a decoder's tokens): tensors that one run produces and the next
 * consumes (KV caches, encoder states) stay in the worker instead of crossing the thread boundary
 * twice per token. The worker merges what it holds for the sequence under the request's feeds.
 */
export interface SequenceStep {
  id: string;
  /** True on the sequence's first run: the worker starts it empty. Later runs find their state or fail. */
  first: boolean;
  /** Outputs kept as the next run's inputs (output name -> input name); they are not posted back. */
  carry: Record<string, string>;
  /** Inputs fed now and kept for later runs of the sequence (fed once, e.g. encoder hidden states). */
  retain: readonly string[];
  /** Outputs neither kept nor wanted (placeholders a graph returns): not posted back. */
  discard: readonly string[];
}

export type WorkerRequest =
  | { type: 'probe'; requestId: number; provider: Exclude<InferenceDevice, 'cpu'> }
  | { type: 'load'; requestId: number; modelKey: string; path: string; executionProvider: InferenceDevice; settings: WorkerSessionSettings }
  | { type: 'run'; requestId: number; modelKey: string; feeds: Record<string, TensorData> }
  /** Steps of sequences this worker holds, run together where `batching` allows (see step-batching.ts). */
  | { type: 'run_steps'; requestId: number; modelKey: string; steps: Array<{ feeds: Record<string, TensorData>; sequence: SequenceStep }>; batching: StepBatching }
  /** Frees what the worker holds for a sequence (answered with `ended`, held or not). */
  | { type: 'end_sequence'; requestId: number; sequenceId: string }
  /**
   * End the thread once no native run is in flight: `release` frees every session first (a clean
   * close); otherwise the worker exits with `exitCode` as a crash would, answering nothing more.
   * Never `Worker.terminate()` a thread whose onnxruntime run is in flight: the run completes after
   * the thread's environment is gone and onnxruntime-node aborts the whole process.
   */
  | { type: 'exit'; requestId: number; release: boolean; exitCode: number };

export interface TensorMetadata {
  name: string;
  type: string;
  /** Fixed sizes as numbers, symbolic ones (e.g. 'batch') as strings. */
  shape: Array<number | string>;
}

export type WorkerResponse =
  | { type: 'probed'; requestId: number; available: boolean; reason: string }
  | { type: 'loaded'; requestId: number; inputs: TensorMetadata[]; outputs: TensorMetadata[] }
  | { type: 'result'; requestId: number; outputs: Record<string, TensorData>; runMs: number }
  /** Per step, its outputs or why it failed; per run, which steps it carried. */
  | { type: 'step_results'; requestId: number; outcomes: StepOutcome[]; runs: StepRunRecord[] }
  | { type: 'ended'; requestId: number }
  | { type: 'failed'; requestId: number; message: string };

/** Bytes of tensor data in a message (what crossing the thread boundary costs). */
export function tensorBytesOf(tensors: Record<string, TensorData>): number {
  let bytes = 0;
  for (const tensor of Object.values(tensors)) bytes += tensor.data.byteLength;
  return bytes;
}

/** The typed-array buffers to hand over with a message (each buffer listed once). */
export function transferListOf(...tensorSets: Array<Record<string, TensorData>>): ArrayBuffer[] {
  const buffers = new Set<ArrayBuffer>();
  for (const tensors of tensorSets) {
    for (const tensor of Object.values(tensors)) {
      // SharedArrayBuffers are shared, not transferred; listing one would throw.
      if (tensor.data.buffer instanceof ArrayBuffer) buffers.add(tensor.data.buffer);
    }
  }
  return [...buffers];
}
