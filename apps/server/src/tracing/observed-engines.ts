import type {
  AsrEngine,
  AsrSession,
  LlmEngine,
  LlmEvent,
  LlmRequest,
  SpeechToSpeechEngine,
  SpeechToSpeechResponseDoneEvent,
  TtsEngine,
  TtsResult,
  TtsStream,
} from '@switchboard/inference';
import { engineFailureOf, type EngineObserver, type EngineRequest, type EngineTarget } from './engine-observer';
import { ATTR, SPAN } from './span-attributes';

/**
 * Decorators that watch each engine request of a call: a span per request when the call is traced,
 * and every failure counted by provider and step. Like the usage meters they wrap, they hand every
 * chunk, token and result on untouched and add no waiting of their own.
 */

/** One span per final transcript: for remote engines the request is made when the turn ends. */
export function observeAsr(engine: AsrEngine, target: EngineTarget, observer: EngineObserver): AsrEngine {
  return {
    name: engine.name,
    sampleRate: engine.sampleRate,
    supportsPartials: engine.supportsPartials,
    createSession(options): AsrSession {
      const session = engine.createSession(options);
      return {
        pushAudio: (pcm16k) => session.pushAudio(pcm16k),
        onPartial: (listener) => session.onPartial(listener),
        finish: async () => {
          const request = observer.request(options.callId, target, engine.name, SPAN.stt);
          try {
            const result = await session.finish();
            request.note({ [ATTR.sttAudioSeconds]: result.audioSeconds, ...timingAttributes(result.timings) });
            request.end();
            return result;
          } catch (error) {
            request.fail(engineFailureOf(error));
            throw error;
          }
        },
        cancel: () => session.cancel(),
      };
    },
  };
}

/** One span per LLM request: a reply with tool rounds makes one per round. */
export function observeLlm(engine: LlmEngine, target: EngineTarget, observer: EngineObserver): LlmEngine {
  return {
    name: engine.name,
    async *stream(request: LlmRequest): AsyncGenerator<LlmEvent> {
      const observed = observer.request(request.callId, target, engine.name, SPAN.llm);
      let toolCalls = 0;
      try {
        // for-await: a consumer that stops early returns this generator, which returns the inner one.
        for await (const event of engine.stream(request)) {
          if (event.type === 'tool_call') toolCalls += 1;
          if (event.type === 'done') {
            observed.note({
              [ATTR.llmFinishReason]: [event.finishReason],
              [ATTR.llmToolCalls]: toolCalls,
              ...(event.usage !== null && { [ATTR.inputTokens]: event.usage.inputTokens, [ATTR.outputTokens]: event.usage.outputTokens }),
              ...timingAttributes(event.timings),
            });
          }
          yield event;
        }
      } catch (error) {
        observed.fail(engineFailureOf(error));
        throw error;
      } finally {
        // Reached without `done` only when the consumer stopped reading (a barge-in).
        if (request.signal?.aborted === true) observed.note({ [ATTR.cancelled]: true });
        observed.end();
      }
    },
  };
}

/** One span per synthesis (a reply is spoken a clause at a time, so it makes several). */
export function observeTts(engine: TtsEngine, target: EngineTarget, observer: EngineObserver): TtsEngine {
  return {
    name: engine.name,
    sampleRate: engine.sampleRate,
    synthesize(text, options): TtsStream {
      const request = observer.request(options.callId, target, engine.name, SPAN.tts);
      request.note({ [ATTR.ttsCharacters]: text.length });
      return new ObservedTtsStream(engine.synthesize(text, options), request);
    },
  };
}

class ObservedTtsStream implements TtsStream {
  readonly sampleRate: number;
  readonly result: Promise<TtsResult>;
  private bytes = 0;

  constructor(
    private readonly inner: TtsStream,
    private readonly request: EngineRequest,
  ) {
    this.sampleRate = inner.sampleRate;
    this.result = inner.result;
    // Both branches: a consumer that only iterates never leaves `result` rejected unhandled here.
    inner.result.then(
      (result) => {
        request.note({ [ATTR.ttsAudioBytes]: this.bytes, ...timingAttributes(result.timings) });
        request.end();
      },
      (error: unknown) => request.fail(engineFailureOf(error)),
    );
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Int16Array> {
    try {
      for await (const chunk of this.inner) {
        this.bytes += chunk.byteLength;
        yield chunk;
      }
    } catch (error) {
      this.request.fail(engineFailureOf(error));
      throw error;
    }
  }

  cancel(): void {
    this.inner.cancel();
    // Ended now: an engine's `result` may settle late (or, on a cancel, never).
    this.request.note({ [ATTR.ttsAudioBytes]: this.bytes });
    this.request.fail({ errorType: 'cancelled', cancelled: true });
  }
}

/**
 * The realtime engine: a span for connecting, one per response (reported when it is done, with
 * its tokens), and every error the session reports counted.
 */
export function observeSpeechToSpeech(engine: SpeechToSpeechEngine, target: EngineTarget, observer: EngineObserver): SpeechToSpeechEngine {
  return {
    name: engine.name,
    inputFormat: engine.inputFormat,
    outputFormat: engine.outputFormat,
    connect: async (options) => {
      const connecting = observer.request(options.callId, target, engine.name, SPAN.realtimeConnect);
      let session;
      try {
        session = await engine.connect(options);
      } catch (error) {
        connecting.fail(engineFailureOf(error));
        throw error;
      }
      connecting.note(timingAttributes(session.connectTimings));
      connecting.end();
      // Attached before this resolves: only microtasks separate it from the caller's own listeners.
      session.on('error', (error) => observer.failed(target, engineFailureOf(error)));
      session.on('response_done', (event) => reportResponse(observer, options.callId, target, engine.name, event));
      return session;
    },
  };
}

function reportResponse(observer: EngineObserver, callId: string, target: EngineTarget, engineName: string, event: SpeechToSpeechResponseDoneEvent): void {
  const startTime = new Date(Date.now() - event.timings.totalMs);
  const response = observer.request(callId, target, engineName, SPAN.realtimeResponse, startTime);
  response.note({
    [ATTR.realtimeStatus]: event.status,
    ...(event.usage !== undefined && { [ATTR.inputTokens]: event.usage.inputTextTokens + event.usage.inputAudioTokens, [ATTR.outputTokens]: event.usage.outputTextTokens + event.usage.outputAudioTokens }),
    ...timingAttributes(event.timings),
  });
  // A failed response comes as response.done, not as a session error: counted here.
  if (event.status === 'failed') response.fail({ errorType: 'response_failed', cancelled: false });
  else response.end();
}

function timingAttributes(timings: { firstResultMs?: number; attempts?: number }): Record<string, number> {
  return {
    ...(timings.firstResultMs !== undefined && { [ATTR.firstResultMs]: Math.round(timings.firstResultMs) }),
    ...(timings.attempts !== undefined && { [ATTR.attempts]: timings.attempts }),
  };
}
