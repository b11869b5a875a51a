import type { CapabilityObserver, SynthesisReport } from '../contracts/capability-observer';
import type { TtsEngine, TtsResult, TtsStream } from './tts-engine';

/** The TTS engine whose every synthesis is reported to `observer` once, however it ends. */
export function observedTts(engine: TtsEngine, observer: CapabilityObserver): TtsEngine {
  return {
    name: engine.name,
    sampleRate: engine.sampleRate,
    synthesize(text, options): TtsStream {
      const report = observer.synthesis({ callId: options.callId, engineName: engine.name, text });
      return new ObservedTtsStream(engine.synthesize(text, options), report);
    },
  };
}

/**
 * Hands every chunk on untouched and reports the synthesis's end exactly once: the engine's result,
 * its failure (the stream throwing or `result` rejecting, whichever comes first), or the call's cancel.
 */
class ObservedTtsStream implements TtsStream {
  readonly sampleRate: number;
  readonly result: Promise<TtsResult>;
  private samples = 0;
  private bytes = 0;
  private reported = false;

  constructor(
    private readonly inner: TtsStream,
    private readonly report: SynthesisReport,
  ) {
    this.sampleRate = inner.sampleRate;
    this.result = inner.result;
    // Both branches: a consumer that only iterates never leaves `result` rejected unhandled here.
    inner.result.then(
      (result) => this.end(() => this.report.synthesized(result, this.audio())),
      (error: unknown) => this.end(() => this.report.failed(error, this.audio())),
    );
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Int16Array> {
    try {
      // for-await: breaking out of the caller's loop returns this generator, which returns the engine's.
      for await (const chunk of this.inner) {
        this.samples += chunk.length;
        this.bytes += chunk.byteLength;
        yield chunk;
      }
    } catch (error) {
      this.end(() => this.report.failed(error, this.audio()));
      throw error;
    }
  }

  cancel(): void {
    this.inner.cancel();
    // Reported now, not on the rejection: an engine's `result` may settle late (or, on a cancel, never).
    this.end(() => this.report.cancelled(this.audio()));
  }

  private audio(): { bytes: number; seconds: number } {
    return { bytes: this.bytes, seconds: this.samples / this.sampleRate };
  }

  private end(reportIt: () => void): void {
    if (this.reported) return;
    this.reported = true;
    reportIt();
  }
}
