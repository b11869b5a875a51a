import type {
  AsrEngine,
  AsrSession,
  LlmEngine,
  LlmEvent,
  LlmRequest,
  SpeechToSpeechEngine,
  TtsEngine,
  TtsResult,
  TtsStream,
} from '@switchboard/inference';
import type { CallUsageMeter } from './call-usage-meter';
import type { CallUsageRegistry } from './call-usage-registry';

/**
 * Decorators that meter shared engines per call. The meter is looked up by callId when the usage is
 * known (not when the request starts): usage that lands after the call closed is not counted, the
 * same rule as for compute entries. A call with no open meter is served as usual, unmetered.
 */
type MeterLookup = Pick<CallUsageRegistry, 'meterFor'>;

export function meterAsr(engine: AsrEngine, registry: MeterLookup): AsrEngine {
  return {
    name: engine.name,
    sampleRate: engine.sampleRate,
    supportsPartials: engine.supportsPartials,
    createSession(options): AsrSession {
      const session = engine.createSession(options);
      return {
        pushAudio: (pcm16k) => session.pushAudio(pcm16k),
        onPartial: (listener) => session.onPartial(listener),
        // Only a transcript that came back is billed; a cancelled session's finish() rejects.
        finish: async () => {
          const result = await session.finish();
          registry.meterFor(options.callId)?.addSttAudio(result.audioSeconds);
          return result;
        },
        cancel: () => session.cancel(),
      };
    },
  };
}

export function meterTts(engine: TtsEngine, registry: MeterLookup): TtsEngine {
  return {
    name: engine.name,
    sampleRate: engine.sampleRate,
    synthesize(text, options): TtsStream {
      return new MeteredTtsStream(engine.synthesize(text, options), text, () => registry.meterFor(options.callId));
    },
  };
}

/**
 * Charges a synthesis once: the engine's own figures when it completes; otherwise (barge-in
 * cancel, failure) the whole text, since a remote TTS bills the request, and the audio the
 * caller actually received.
 */
class MeteredTtsStream implements TtsStream {
  readonly sampleRate: number;
  readonly result: Promise<TtsResult>;
  private samplesYielded = 0;
  private charged = false;

  constructor(
    private readonly inner: TtsStream,
    private readonly text: string,
    private readonly meter: () => CallUsageMeter | undefined,
  ) {
    this.sampleRate = inner.sampleRate;
    this.result = inner.result;
    // The rejection branch also means a caller that only iterates never leaves `result` rejected unhandled.
    inner.result.then(
      (result) => this.charge(result.characters, result.audioSeconds),
      () => this.chargePartial(),
    );
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Int16Array> {
    // for-await: breaking out of the caller's loop returns this generator, which returns the inner one.
    for await (const chunk of this.inner) {
      this.samplesYielded += chunk.length;
      yield chunk;
    }
  }

  cancel(): void {
    this.inner.cancel();
    // Charged now, not on the rejection: an engine's `result` may settle late (or, on a cancel, never).
    this.chargePartial();
  }

  private chargePartial(): void {
    this.charge(this.text.length, this.samplesYielded / this.sampleRate);
  }

  private charge(characters: number, audioSeconds: number): void {
    if (this.charged) return;
    this.charged = true;
    this.meter()?.addTts(characters, audioSeconds);
  }
}

export function meterLlm(engine: LlmEngine, registry: MeterLookup): LlmEngine {
  return {
    name: engine.name,
    async *stream(request: LlmRequest): AsyncGenerator<LlmEvent> {
      // for-await: a consumer that breaks out returns this generator, which returns (closes) the inner stream.
      for await (const event of engine.stream(request)) {
        // Counted before it is handed on, so a consumer that stops at 'done' still gets it billed.
        if (event.type === 'done' && event.usage !== null) registry.meterFor(request.callId)?.addLlmUsage(event.usage);
        yield event;
      }
    },
  };
}

export function meterSpeechToSpeech(engine: SpeechToSpeechEngine, registry: MeterLookup): SpeechToSpeechEngine {
  return {
    name: engine.name,
    inputFormat: engine.inputFormat,
    outputFormat: engine.outputFormat,
    // The real session is returned, so listeners attach to it. Only microtasks separate the inner
    // resolve from the caller's, so no socket event can arrive before the caller attaches.
    connect: (options) =>
      engine.connect(options).then((session) => {
        registry.meterFor(options.callId)?.trackSpeechToSpeech(session);
        return session;
      }),
  };
}
