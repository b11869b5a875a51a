/**
 * One call's Silero state at 8 kHz: audio of any length in, one speech probability per 256-sample
 * (32 ms) chunk out. Each chunk is fed with the previous chunk's last 32 samples in front (v5
 * outputs ~0 on clear speech without that context). Chunks of one stream run strictly one after
 * another (each needs the state the previous one produced); chunks of different streams meet in
 * the runtime's batches.
 *
 * Per chunk nothing is allocated here: the model input, the state and the pending samples live
 * in arrays made once per stream (the runtime copies them into its batch).
 */
import { EngineError, type ModelHandle, type TensorData } from '../contracts';
import type { VadFrame, VadStream } from './vad-frame';

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
  /** Pushed samples not yet run, as a FIFO: [queueStart, queueEnd). Grows only past its capacity. */
  private queue = new Int16Array(CHUNK_SAMPLES * 8);
  private queueStart = 0;
  private queueEnd = 0;
  private samplesPushed = 0;
  /** Chunks already promised to a push (run, or waiting for the ones before them). */
  private chunksClaimed = 0;
  private nextChunkIndex = 0;
  private processing: Promise<unknown> = Promise.resolve();
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
   * Queues the audio (copied now: the caller may reuse its array) and resolves with the frames of
   * the chunks it completed, once they have run. A leftover under 256 samples waits for the next
   * push.
   */
  push(pcm8k: Int16Array): Promise<VadFrame[]> {
    if (this.closed) return Promise.reject(new EngineError(ENGINE, 'bad_request', `VAD stream ${this.callId} is closed`, false));
    if (!(pcm8k instanceof Int16Array)) {
      return Promise.reject(new EngineError(ENGINE, 'bad_request', 'VAD input must be 16-bit PCM at 8 kHz in an Int16Array', false));
    }
    this.enqueue(pcm8k);
    this.samplesPushed += pcm8k.length;
    const chunksComplete = Math.floor(this.samplesPushed / CHUNK_SAMPLES);
    const count = chunksComplete - this.chunksClaimed;
    this.chunksClaimed = chunksComplete;
    const run = this.processing.then(() => this.runChunks(count));
    // A failed push must not block the next ones: their chunks still run, in order.
    this.processing = run.catch(() => undefined);
    return run;
  }

  reset(): void {
    this.processing = this.processing.then(() => {
      this.state.fill(0);
      this.input.fill(0);
    });
  }

  close(): void {
    this.closed = true;
    this.queueStart = this.queueEnd = 0;
  }

  /** Runs the chunks one push completed, after those of earlier pushes. */
  private async runChunks(count: number): Promise<VadFrame[]> {
    const frames: VadFrame[] = [];
    for (let done = 0; done < count && !this.closed; done++) {
      try {
        frames.push(await this.runChunk());
      } catch (error) {
        // Skip the rest of this push's chunks so later pushes stay aligned with the timeline.
        const skipped = count - done - 1;
        this.queueStart += skipped * CHUNK_SAMPLES;
        this.nextChunkIndex += skipped;
        throw error;
      }
    }
    return frames;
  }

  private async runChunk(): Promise<VadFrame> {
    const index = this.nextChunkIndex++;
    const input = this.input;
    // Context: the last 32 samples of the previous chunk, already at the end of `input`.
    input.copyWithin(0, CHUNK_SAMPLES, CHUNK_SAMPLES + CONTEXT_SAMPLES);
    const queue = this.queue;
    const start = this.queueStart;
    for (let i = 0; i < CHUNK_SAMPLES; i++) input[CONTEXT_SAMPLES + i] = queue[start + i]! / 32768;
    this.queueStart += CHUNK_SAMPLES;
    const result = await this.model.run(this.feeds, { callId: this.callId });
    const probability = result.outputs.output!.data[0] as number;
    this.state.set(result.outputs.stateN!.data as Float32Array);
    return { index, startMs: index * CHUNK_MS, endMs: (index + 1) * CHUNK_MS, probability, queueWaitMs: result.queueWaitMs, runMs: result.runMs };
  }

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
