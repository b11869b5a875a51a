import { EngineError } from '../../contracts';
import type { TtsResult, TtsStream } from '../tts-engine';

/** What a synthesis producer writes to; `signal` aborts on cancel or when the consumer stops. */
export interface TtsChunkSink {
  readonly signal: AbortSignal;
  emit(chunk: Int16Array): void;
}

export type TtsProducer = (sink: TtsChunkSink) => Promise<TtsResult>;

/**
 * A TtsStream fed by a producer that starts at once (so the first audio is being fetched or
 * synthesized before the caller asks for it) and runs ahead of playback: chunks queue until the
 * consumer takes them. Audio is small (48 KB per second at 24 kHz) next to the latency an
 * underrun would cost, so the queue is not bounded.
 *
 * `result` settles when the consumer has taken the last chunk (or on failure/cancel). Cancelling,
 * or breaking out of the loop, aborts the producer; the loop then ends without an error and
 * `result` rejects with a 'cancelled' EngineError.
 */
export class QueuedTtsStream implements TtsStream {
  readonly result: Promise<TtsResult>;
  private readonly queue: Int16Array[] = [];
  private readonly controller = new AbortController();
  private produced: TtsResult | undefined;
  private failure: EngineError | undefined;
  private wakeConsumer: (() => void) | undefined;
  private settle!: { resolve: (result: TtsResult) => void; reject: (error: EngineError) => void };
  private iterated = false;
  /** `result` has resolved or rejected; nothing changes after that. */
  private settled = false;

  constructor(
    readonly sampleRate: number,
    private readonly engine: string,
    producer: TtsProducer,
    callerSignal?: AbortSignal,
  ) {
    this.result = new Promise<TtsResult>((resolve, reject) => {
      this.settle = { resolve, reject };
    });
    // The caller may only ever iterate; a rejection nobody awaits must not crash the process.
    this.result.catch(() => undefined);
    if (callerSignal?.aborted) this.cancel();
    else callerSignal?.addEventListener('abort', () => this.cancel(), { once: true });
    const sink: TtsChunkSink = { signal: this.controller.signal, emit: (chunk) => this.enqueue(chunk) };
    producer(sink).then(
      (result) => this.finishProducing(result),
      (error: unknown) => this.fail(this.toEngineError(error)),
    );
  }

  cancel(): void {
    if (this.controller.signal.aborted) return;
    this.controller.abort();
    this.queue.length = 0;
    this.fail(new EngineError(this.engine, 'cancelled', `${this.engine}: synthesis cancelled`, false));
  }

  [Symbol.asyncIterator](): AsyncIterator<Int16Array> {
    if (this.iterated) throw new Error(`${this.engine}: a TTS stream can be iterated only once`);
    this.iterated = true;
    return this.drain();
  }

  private async *drain(): AsyncGenerator<Int16Array> {
    try {
      for (;;) {
        const chunk = this.queue.shift();
        if (chunk !== undefined) {
          yield chunk;
          continue;
        }
        if (this.failure?.code === 'cancelled') return;
        // Audio produced before a failure has been delivered above; now the failure itself.
        if (this.failure !== undefined) throw this.failure;
        if (this.produced !== undefined) {
          this.settled = true;
          this.settle.resolve(this.produced);
          return;
        }
        await new Promise<void>((resolve) => (this.wakeConsumer = resolve));
      }
    } finally {
      // The consumer broke out early: stop producing audio nobody will play.
      if (!this.settled) this.cancel();
    }
  }

  private enqueue(chunk: Int16Array): void {
    if (this.settled || chunk.length === 0) return;
    this.queue.push(chunk);
    this.wake();
  }

  private finishProducing(result: TtsResult): void {
    if (this.settled) return;
    this.produced = result;
    this.wake();
  }

  private fail(failure: EngineError): void {
    if (this.settled) return;
    this.settled = true;
    this.failure = failure;
    this.settle.reject(failure);
    this.wake();
  }

  private wake(): void {
    const wake = this.wakeConsumer;
    this.wakeConsumer = undefined;
    wake?.();
  }

  private toEngineError(error: unknown): EngineError {
    if (error instanceof EngineError) return error;
    return new EngineError(this.engine, 'inference_failed', `${this.engine}: ${error instanceof Error ? error.message : String(error)}`, false, { cause: error });
  }
}
