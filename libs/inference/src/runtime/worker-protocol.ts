/**
 * Messages between the runtime (caller's thread) and an inference worker thread. Tensors travel
 * as plain TensorData whose typed-array buffers are transferred, not copied, in both directions.
 */
import type { InferenceDevice, TensorData } from '../contracts';

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

export type WorkerRequest =
  | { type: 'probe'; requestId: number; provider: Exclude<InferenceDevice, 'cpu'> }
  | { type: 'load'; requestId: number; modelKey: string; path: string; executionProvider: InferenceDevice; settings: WorkerSessionSettings }
  | { type: 'run'; requestId: number; modelKey: string; feeds: Record<string, TensorData> }
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
  | { type: 'failed'; requestId: number; message: string };

/** The typed-array buffers to hand over with a message (each buffer listed once). */
export function transferListOf(tensors: Record<string, TensorData>): ArrayBuffer[] {
  const buffers = new Set<ArrayBuffer>();
  for (const tensor of Object.values(tensors)) {
    // SharedArrayBuffers are shared, not transferred; listing one would throw.
    if (tensor.data.buffer instanceof ArrayBuffer) buffers.add(tensor.data.buffer);
  }
  return [...buffers];
}
