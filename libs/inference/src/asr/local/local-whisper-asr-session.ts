import { EngineError } from '../../contracts';
import type { AsrPartial, AsrResult, AsrSession } from '../asr-engine';
import { asEngineError, type TranscribeOptions, type WhisperTranscriber } from './whisper-transcriber';

const SAMPLE_RATE = 16000;
const INITIAL_CAPACITY = SAMPLE_RATE * 4;

/**
 * One utterance: audio is buffered as it arrives; with partials on, the buffer (its latest 30 s
 * at most) is re-decoded after every `partialIntervalMs` of new audio (one decode at a time, so a
 * slow model skips partials rather than queueing them); `finish()` decodes everything for the
 * final text, window by window.
 */
export class LocalWhisperAsrSession implements AsrSession {
  private buffer = new Int16Array(INITIAL_CAPACITY);
  private length = 0;
  private readonly listeners: Array<(partial: AsrPartial) => void> = [];
  private readonly partialIntervalSamples: number;
  private samplesAtLastPartial = 0;
  private partialInFlight: AbortController | undefined;
  private lastPartialText: string | undefined;
  private firstAudioAt: number | undefined;
  private firstPartialMs: number | undefined;
  private state: 'open' | 'finishing' | 'done' | 'cancelled' = 'open';
  private readonly finalAbort = new AbortController();

  constructor(
    private readonly engine: string,
    private readonly transcriber: WhisperTranscriber,
    private readonly options: TranscribeOptions,
    partialIntervalMs: number,
  ) {
    this.partialIntervalSamples = Math.round((partialIntervalMs * SAMPLE_RATE) / 1000);
  }

  pushAudio(pcm16k: Int16Array): void {
    if (this.state !== 'open') {
      throw new EngineError(this.engine, 'bad_request', `pushAudio after the session was ${this.state === 'cancelled' ? 'cancelled' : 'finished'}`, false);
    }
    if (pcm16k.length === 0) return;
    this.firstAudioAt ??= performance.now();
    this.ensureCapacity(this.length + pcm16k.length);
    this.buffer.set(pcm16k, this.length);
    this.length += pcm16k.length;
    this.maybeStartPartial();
  }

  onPartial(listener: (partial: AsrPartial) => void): void {
    this.listeners.push(listener);
  }

  async finish(): Promise<AsrResult> {
    if (this.state === 'cancelled') throw this.cancelledError();
    if (this.state !== 'open') throw new EngineError(this.engine, 'bad_request', 'finish() called twice', false);
    this.state = 'finishing';
    const started = performance.now();
    this.partialInFlight?.abort();
    const audioSeconds = this.length / SAMPLE_RATE;
    if (this.length === 0) {
      this.state = 'done';
      return { text: '', language: this.options.language, audioSeconds: 0, timings: { totalMs: performance.now() - started, runMs: 0, queueWaitMs: 0 } };
    }
    try {
      const transcription = await this.transcriber.transcribe(this.buffer.subarray(0, this.length), { ...this.options, signal: this.finalAbort.signal });
      if (this.isCancelled()) throw this.cancelledError();
      this.state = 'done';
      return {
        text: transcription.text,
        language: this.options.language,
        audioSeconds,
        timings: {
          totalMs: performance.now() - started,
          runMs: transcription.runMs,
          queueWaitMs: transcription.queueWaitMs,
          firstResultMs: this.firstPartialMs,
        },
      };
    } catch (error) {
      if (this.isCancelled()) throw this.cancelledError();
      this.state = 'done';
      throw asEngineError(this.engine, error);
    } finally {
      this.buffer = new Int16Array(0);
    }
  }

  cancel(): void {
    if (this.state === 'done' || this.state === 'cancelled') return;
    this.state = 'cancelled';
    this.partialInFlight?.abort();
    this.finalAbort.abort();
  }

  private maybeStartPartial(): void {
    if (this.partialIntervalSamples === 0 || this.partialInFlight) return;
    if (this.length - this.samplesAtLastPartial < this.partialIntervalSamples) return;
    this.samplesAtLastPartial = this.length;
    const abort = new AbortController();
    this.partialInFlight = abort;
    // Features are taken synchronously inside transcribe(), so the buffer may keep growing. A
    // partial covers at most the latest window, so a long monologue does not make every partial
    // re-decode all of it.
    const start = Math.max(0, this.length - this.transcriber.windowSamples);
    this.transcriber
      .transcribe(this.buffer.subarray(start, this.length), { ...this.options, signal: abort.signal })
      .then((transcription) => {
        if (this.state !== 'open' || transcription.text === this.lastPartialText) return;
        this.lastPartialText = transcription.text;
        this.firstPartialMs ??= performance.now() - (this.firstAudioAt ?? performance.now());
        for (const listener of this.listeners) listener({ text: transcription.text, stable: false });
      })
      // A failed partial only costs that partial: the final decode reports real failures.
      .catch(() => undefined)
      .finally(() => {
        if (this.partialInFlight === abort) this.partialInFlight = undefined;
        if (this.state === 'open') this.maybeStartPartial();
      });
  }

  private ensureCapacity(needed: number): void {
    if (needed <= this.buffer.length) return;
    const grown = new Int16Array(Math.max(needed, this.buffer.length * 2));
    grown.set(this.buffer.subarray(0, this.length));
    this.buffer = grown;
  }

  /** A method, not an inline comparison: cancel() may change the state while finish() awaits. */
  private isCancelled(): boolean {
    return this.state === 'cancelled';
  }

  private cancelledError(): EngineError {
    return new EngineError(this.engine, 'cancelled', 'transcription cancelled', false);
  }
}
