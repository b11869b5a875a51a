/**
 * One call's Silero state at 8 kHz: audio of any length in, one speech probability per 256-sample
 * (32 ms) chunk out. Each chunk is fed with the previous chunk's last 32 samples in front (v5
 * outputs ~0 on clear speech without that context). Chunks of one stream run strictly one after
 * another (each needs the state the previous one produced); chunks of different streams meet in
 * the runtime's batches.
 *
 * This is the call's only ordering point for VAD: a push queues samples and, when it completes a
 * chunk and none is running, starts it; each result delivers its frame and starts the next. A push
 * that completes no chunk (most 20 ms frames) allocates nothing and makes no promise. Per chunk the
 * model input, the state and the pending samples live in arrays made once per stream (the runtime
 * copies them into its batch); the only promise is the runtime's own.
 */
import { EngineError, type ModelHandle, type ModelRunResult, type TensorData } from '../contracts';
import type { VadListener, VadStream } from './vad-frame';
import { VadListeners } from './vad-listeners';

const SAMPLE_RATE = 8000;
const CHUNK_SAMPLES = 256;
const CONTEXT_SAMPLES = 32;
const CHUNK_MS = (CHUNK_SAMPLES * 1000) / SAMPLE_RATE;
const STATE_SIZE = 2 * 128;
const ENGINE = 'silero-vad';

export class SileroVadStream implements VadStream {
  readonly sampleRate = SAMPLE_RATE;
  readonly chunkSamples = CHUNK_SAMPLES;

  private readonly input = new Float32Array(CONTEXT_SAMPLES + CHUNK_SAMPLES);
  private readonly state = new Float32Array(STATE_SIZE);
  private readonly feeds: Record<string, TensorData>;
  private readonly listeners = new VadListeners();
  /** Pushed samples not yet run, as a FIFO: [queueStart, queueEnd). Grows only past its capacity. */
  private queue = new Int16Array(CHUNK_SAMPLES * 8);
  private queueStart = 0;
  private queueEnd = 0;
  private samplesPushed = 0;
  /** Chunks complete in what was pushed; those from nextChunkIndex on have not started. */
  private chunksComplete = 0;
  private nextChunkIndex = 0;
  /** The chunk at the runtime now, if any. */
  private runningIndex: number | undefined;
  /** Chunk indexes from which the model state starts afresh (reset() calls not yet reached). */
  private resetsAt: number[] = [];
  private closed = false;

  constructor(
    readonly callId: string,
    private readonly model: ModelHandle,
    sampleRateTensor: TensorData,
  ) {
    this.feeds = {
      input: { type: 'float32', data: this.input, dims: [1, CONTEXT_SAMPLES + CHUNK_SAMPLES] },
      state: { type: 'float32', data: this.state, dims: [2, 1, 128] },
      sr: sampleRateTensor,
    };
  }

  /**
   * Queues the audio (copied now: the caller may reuse its array); a leftover under 256 samples
   * waits for the next push. Input that is not 16-bit PCM, or a push after close(), is the caller's
   * mistake and throws at once.
   */
  push(pcm8k: Int16Array): void {
    if (!(pcm8k instanceof Int16Array)) throw new EngineError(ENGINE, 'bad_request', 'VAD input must be 16-bit PCM at 8 kHz in an Int16Array', false);
    if (this.closed) throw new EngineError(ENGINE, 'bad_request', `VAD stream ${this.callId} is closed`, false);
    this.enqueue(pcm8k);
    this.samplesPushed += pcm8k.length;
    this.chunksComplete = Math.floor(this.samplesPushed / CHUNK_SAMPLES);
    if (this.runningIndex === undefined) this.runNext();
  }

  listen(listener: VadListener): () => void {
    return this.listeners.add(listener);
  }

  drained(): Promise<void> {
    return this.listeners.whenDrained(this.idle);
  }

  reset(): void {
    this.resetsAt.push(this.chunksComplete);
  }

  close(): void {
    this.closed = true;
    this.queueStart = this.queueEnd = 0;
    this.listeners.clear();
  }

  private get idle(): boolean {
    return this.closed || (this.runningIndex === undefined && this.nextChunkIndex >= this.chunksComplete);
  }

  /** Starts the next complete chunk, or tells drained() waiters there is none. */
  private runNext(): void {
    if (this.closed || this.nextChunkIndex >= this.chunksComplete) {
      this.runningIndex = undefined;
      this.listeners.drained();
      return;
    }
    const index = this.nextChunkIndex++;
    if (this.resetsAt.length > 0 && (this.resetsAt[0] as number) <= index) {
      this.resetsAt = this.resetsAt.filter((at) => at > index);
      this.state.fill(0);
      this.input.fill(0);
    }
    const input = this.input;
    // Context: the last 32 samples of the previous chunk, already at the end of `input`.
    input.copyWithin(0, CHUNK_SAMPLES, CHUNK_SAMPLES + CONTEXT_SAMPLES);
    const queue = this.queue;
    const start = this.queueStart;
    for (let i = 0; i < CHUNK_SAMPLES; i++) input[CONTEXT_SAMPLES + i] = queue[start + i]! / 32768;
    this.queueStart += CHUNK_SAMPLES;
    this.runningIndex = index;
    let result: Promise<ModelRunResult>;
    try {
      result = this.model.run(this.feeds, { callId: this.callId });
    } catch (error) {
      return this.onFailure(error);
    }
    void result.then(this.onResult, this.onFailure);
  }

  /** Bound once: a chunk's result costs no closure. */
  private readonly onResult = (result: ModelRunResult): void => {
    const index = this.runningIndex as number;
    if (this.closed) return this.runNext();
    const probability = result.outputs.output!.data[0] as number;
    this.state.set(result.outputs.stateN!.data as Float32Array);
    this.listeners.deliver({ index, startMs: index * CHUNK_MS, endMs: (index + 1) * CHUNK_MS, probability, queueWaitMs: result.queueWaitMs, runMs: result.runMs });
    this.runNext();
  };

  /** The chunk has no frame; the next ones still run, so later frames stay on the timeline. */
  private readonly onFailure = (error: unknown): void => {
    if (!this.closed) this.listeners.fail(error);
    this.runNext();
  };

  private enqueue(pcm: Int16Array): void {
    const pending = this.queueEnd - this.queueStart;
    if (this.queueEnd + pcm.length > this.queue.length) {
      if (pending + pcm.length > this.queue.length) {
        const grown = new Int16Array(Math.max(this.queue.length * 2, pending + pcm.length));
        grown.set(this.queue.subarray(this.queueStart, this.queueEnd));
        this.queue = grown;
      } else {
        this.queue.copyWithin(0, this.queueStart, this.queueEnd);
      }
      this.queueStart = 0;
      this.queueEnd = pending;
    }
    this.queue.set(pcm, this.queueEnd);
    this.queueEnd += pcm.length;
  }
}
