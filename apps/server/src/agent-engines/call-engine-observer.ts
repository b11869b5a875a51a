import type {
  AsrResult,
  CapabilityObserver,
  CompletionReport,
  EngineError,
  EngineRequestInfo,
  EngineTimings,
  LlmDoneEvent,
  SpeechToSpeechReport,
  SpeechToSpeechResponseDoneEvent,
  SpeechToSpeechSession,
  SynthesisReport,
  SynthesizedAudio,
  TranscriptionReport,
  TtsResult,
} from '@switchboard/inference';
import type { EngineStep } from '../metrics/engine-error-metrics';
import { engineFailureOf, type EngineObserver, type EngineTarget } from '../tracing/engine-observer';
import { ATTR, SPAN } from '../tracing/span-attributes';
import type { CallUsageRegistry } from '../billing/usage-meters/call-usage-registry';

/**
 * The one observer of a call's engines: what each request reports feeds both the call's usage
 * meter (the cost ledger) and its request span and failure count (tracing and metrics).
 *
 * The meter is looked up by callId when the usage is known, not when the request starts: usage
 * that lands after the call closed is not counted, the same rule as for compute entries. A call
 * with no open meter (or an observer given none: a post-call analysis counts its own tokens) is
 * served as usual, unmetered.
 */
export class CallEngineObserver implements CapabilityObserver {
  constructor(
    /** Which provider and model serve each step, for span attributes and failure labels. */
    private readonly targets: Partial<Record<EngineStep, EngineTarget>>,
    private readonly engines: EngineObserver,
    private readonly meters?: Pick<CallUsageRegistry, 'meterFor'>,
  ) {}

  /** One span per final transcript; only a transcript that came back is billed. */
  transcription({ callId, engineName }: EngineRequestInfo): TranscriptionReport {
    const request = this.engines.request(callId, this.target('stt'), engineName, SPAN.stt);
    return {
      transcribed: (result: AsrResult) => {
        this.meters?.meterFor(callId)?.addSttAudio(result.audioSeconds);
        request.note({ [ATTR.sttAudioSeconds]: result.audioSeconds, ...timingAttributes(result.timings) });
        request.end();
      },
      failed: (error) => request.fail(engineFailureOf(error)),
    };
  }

  /** One span per LLM request, ended when its stream is over. */
  completion({ callId, engineName }: EngineRequestInfo): CompletionReport {
    const request = this.engines.request(callId, this.target('llm'), engineName, SPAN.llm);
    return {
      done: (event: LlmDoneEvent, toolCalls: number) => {
        if (event.usage !== null) this.meters?.meterFor(callId)?.addLlmUsage(event.usage);
        request.note({
          [ATTR.llmFinishReason]: [event.finishReason],
          [ATTR.llmToolCalls]: toolCalls,
          ...(event.usage !== null && { [ATTR.inputTokens]: event.usage.inputTokens, [ATTR.outputTokens]: event.usage.outputTokens }),
          ...timingAttributes(event.timings),
        });
      },
      failed: (error) => request.fail(engineFailureOf(error)),
      ended: (aborted) => {
        if (aborted) request.note({ [ATTR.cancelled]: true });
        request.end();
      },
    };
  }

  /**
   * One span per synthesis (a reply is spoken a clause at a time, so it makes several). Charged
   * once: the engine's own figures when it completes; otherwise (barge-in cancel, failure) the whole
   * text, since a remote TTS bills the request, and the audio the caller actually received.
   */
  synthesis({ callId, engineName, text }: EngineRequestInfo & { text: string }): SynthesisReport {
    const request = this.engines.request(callId, this.target('tts'), engineName, SPAN.tts);
    request.note({ [ATTR.ttsCharacters]: text.length });
    const charge = (characters: number, audioSeconds: number): void => this.meters?.meterFor(callId)?.addTts(characters, audioSeconds);
    return {
      synthesized: (result: TtsResult, audio: SynthesizedAudio) => {
        charge(result.characters, result.audioSeconds);
        request.note({ [ATTR.ttsAudioBytes]: audio.bytes, ...timingAttributes(result.timings) });
        request.end();
      },
      failed: (error, audio) => {
        charge(text.length, audio.seconds);
        request.fail(engineFailureOf(error));
      },
      cancelled: (audio) => {
        charge(text.length, audio.seconds);
        request.note({ [ATTR.ttsAudioBytes]: audio.bytes });
        request.fail({ errorType: 'cancelled', cancelled: true });
      },
    };
  }

  /**
   * A span for connecting and one per response (reported when it is done, with its tokens); every
   * error the session reports is counted. The session's running totals are read at snapshot time.
   */
  speechToSpeech({ callId, engineName }: EngineRequestInfo): SpeechToSpeechReport {
    const target = this.target('realtime');
    const connecting = this.engines.request(callId, target, engineName, SPAN.realtimeConnect);
    return {
      connected: (session: SpeechToSpeechSession) => {
        this.meters?.meterFor(callId)?.trackSpeechToSpeech(session);
        connecting.note(timingAttributes(session.connectTimings));
        connecting.end();
      },
      failed: (error) => connecting.fail(engineFailureOf(error)),
      responseDone: (event: SpeechToSpeechResponseDoneEvent) => this.reportResponse(callId, target, engineName, event),
      sessionError: (error: EngineError) => this.engines.failed(target, engineFailureOf(error)),
    };
  }

  private reportResponse(callId: string, target: EngineTarget, engineName: string, event: SpeechToSpeechResponseDoneEvent): void {
    const startTime = new Date(Date.now() - event.timings.totalMs);
    const response = this.engines.request(callId, target, engineName, SPAN.realtimeResponse, startTime);
    response.note({
      [ATTR.realtimeStatus]: event.status,
      ...(event.usage !== undefined && { [ATTR.inputTokens]: event.usage.inputTextTokens + event.usage.inputAudioTokens, [ATTR.outputTokens]: event.usage.outputTextTokens + event.usage.outputAudioTokens }),
      ...timingAttributes(event.timings),
    });
    // A failed response comes as response.done, not as a session error: counted here.
    if (event.status === 'failed') response.fail({ errorType: 'response_failed', cancelled: false });
    else response.end();
  }

  private target(step: EngineStep): EngineTarget {
    const target = this.targets[step];
    if (target === undefined) throw new Error(`CallEngineObserver: no ${step} engine target was given`);
    return target;
  }
}

function timingAttributes(timings: Pick<EngineTimings, 'firstResultMs' | 'attempts'>): Record<string, number> {
  return {
    ...(timings.firstResultMs !== undefined && { [ATTR.firstResultMs]: Math.round(timings.firstResultMs) }),
    ...(timings.attempts !== undefined && { [ATTR.attempts]: timings.attempts }),
  };
}
