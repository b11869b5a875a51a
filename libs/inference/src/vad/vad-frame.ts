/** One VAD decision: the speech probability of one chunk of a stream's audio. */
export interface VadFrame {
  /** Chunk number in the stream, from 0. */
  index: number;
  /** Where the chunk lies in the stream's audio (everything ever pushed), in milliseconds. */
  startMs: number;
  endMs: number;
  /** Speech probability, 0..1. */
  probability: number;
  /** Waiting for a batch and a worker, and the batch's run time. */
  queueWaitMs: number;
  runMs: number;
}

/**
 * A per-call stream of speech probabilities for 8 kHz audio: what turn detection consumes. Push
 * audio of any length; each complete chunk yields one frame, in order.
 */
export interface VadStream {
  readonly callId: string;
  readonly sampleRate: number;
  readonly chunkSamples: number;
  push(pcm8k: Int16Array): Promise<VadFrame[]>;
  /** Forget the speech history (model state), keeping the timeline. */
  reset(): void;
  close(): void;
}
