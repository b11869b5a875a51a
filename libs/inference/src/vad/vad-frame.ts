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

/** A consumer of a stream's frames. */
export interface VadListener {
  /** One chunk's decision; frames come in chunk order, each once. */
  onFrame(frame: VadFrame): void;
  /**
   * A chunk could not be run, or this listener's onFrame threw (one without onError that throws is
   * reported to every listener that has one): that chunk has no frame for it, the ones after it
   * still run, in order.
   */
  onError?(error: unknown): void;
}

/**
 * A per-call stream of speech probabilities for 8 kHz audio: what turn detection consumes. Push
 * audio of any length; each complete chunk yields one frame, delivered to the listeners in order.
 *
 * The stream is the call's one ordering point for VAD: push() returns at once (a push that
 * completes no chunk costs nothing more), chunks run one after another because each needs the
 * state the previous one produced, and their frames go to every listener in chunk order. Agents
 * therefore need no promise chain of their own around it.
 */
export interface VadStream {
  readonly callId: string;
  readonly sampleRate: number;
  readonly chunkSamples: number;
  /** Queues the audio (copied: the caller may reuse its array). Throws after close(): nothing pushed then would run. */
  push(pcm8k: Int16Array): void;
  /** Adds a listener, called after those added before it; returns its removal. */
  listen(listener: VadListener): () => void;
  /** Resolves once every chunk pushed so far has run and its frame was delivered (or the stream closed). */
  drained(): Promise<void>;
  /** Forget the speech history (model state) from the next chunk pushed on, keeping the timeline. */
  reset(): void;
  close(): void;
}
