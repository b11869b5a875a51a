import { EngineError } from '../../contracts';
import type { TtsResult, TtsStream } from '../tts-engine';
import { floatToPcm16 } from './float-to-pcm16';

/** One sentence's audio from a model, with the runtime's timings. */
export interface SentenceAudio {
  samples: Float32Array;
  runMs: number;
  queueWaitMs: number;
}

export type SentenceSynthesizer = (sentence: string, signal: AbortSignal) => Promise<SentenceAudio>;

/**
 * Streams a reply sentence by sentence: synthesis starts at once and runs ahead of the consumer,
 * each sentence's PCM16 is yielded as soon as it is ready (one chunk per sentence), and `result`
 * settles after the last. Errors reach both the iterator and `result` as EngineErrors; after
 * cancel() the iterator ends quietly and `result` rejects with code 'cancelled'.
 */
export class SentenceTtsStream implements TtsStream {
  readonly result: Promise<TtsResult>;
  private readonly ready: Int16Array[] = [];
  private wake: (() => void) | undefined;
  private finished = false;
  private failure: EngineError | undefined;
  private readonly abort = new AbortController();

  constructor(
    private readonly engine: string,
    readonly sampleRate: number,
    text: string,
    sentences: readonly string[],
    synthesize: SentenceSynthesizer,
    signal?: AbortSignal,
  ) {
    if (signal?.aborted) this.abort.abort();
    else signal?.addEventListener('abort', () => this.cancel(), { once: true });
    this.result = this.produce(text, sentences, synthesize);
    // Callers that only iterate must not get an unhandled rejection from `result`.
    this.result.catch(() => undefined);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Int16Array> {
    for (;;) {
      if (this.abort.signal.aborted) return;
      const chunk = this.ready.shift();
      if (chunk) {
        yield chunk;
        continue;
      }
      if (this.failure && this.failure.code !== 'cancelled') throw this.failure;
      if (this.finished) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  cancel(): void {
    this.abort.abort();
    this.notify();
  }

  private async produce(text: string, sentences: readonly string[], synthesize: SentenceSynthesizer): Promise<TtsResult> {
    const started = performance.now();
    let runMs = 0;
    let queueWaitMs = 0;
    let samples = 0;
    let firstResultMs: number | undefined;
    try {
      for (const sentence of sentences) {
        this.throwIfCancelled();
        const audio = await synthesize(sentence, this.abort.signal);
        this.throwIfCancelled();
        runMs += audio.runMs;
        queueWaitMs += audio.queueWaitMs;
        samples += audio.samples.length;
        if (audio.samples.length === 0) continue;
        firstResultMs ??= performance.now() - started;
        this.ready.push(floatToPcm16(audio.samples));
        this.notify();
      }
      return {
        timings: { totalMs: performance.now() - started, runMs, queueWaitMs, firstResultMs },
        characters: text.length,
        audioSeconds: samples / this.sampleRate,
      };
    } catch (error) {
      this.failure = this.abort.signal.aborted ? this.cancelledError() : toEngineError(this.engine, error);
      throw this.failure;
    } finally {
      this.finished = true;
      this.notify();
    }
  }

  private throwIfCancelled(): void {
    if (this.abort.signal.aborted) throw this.cancelledError();
  }

  private cancelledError(): EngineError {
    return new EngineError(this.engine, 'cancelled', 'synthesis cancelled', false);
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}

/** Keeps code and retryable flag of an EngineError from the runtime, re-attributed to this engine. */
export function toEngineError(engine: string, error: unknown): EngineError {
  if (error instanceof EngineError) {
    return error.engine === engine ? error : new EngineError(engine, error.code, error.message, error.retryable, { cause: error });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new EngineError(engine, 'inference_failed', `synthesis failed: ${message}`, false, { cause: error });
}
