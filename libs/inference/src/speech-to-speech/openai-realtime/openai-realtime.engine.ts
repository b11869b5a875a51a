import { performance } from 'node:perf_hooks';
import { ExponentialBackoff, TaskCancelledError, handleWhen, retry } from 'cockatiel';
import { EngineError } from '../../contracts/engine-error';
import { isCircuitRefusal, type EndpointCircuitBreaker } from '../../remote/circuit-breaker-registry';
import { validateConnectOptions } from '../connect-options.validation';
import type { SpeechAudioFormat, SpeechToSpeechConnectOptions, SpeechToSpeechEngine, SpeechToSpeechSession } from '../speech-to-speech-engine';
import {
  OPENAI_REALTIME_ENGINE,
  resolveOpenAiRealtimeOptions,
  type OpenAiRealtimeEngineOptions,
  type ResolvedOpenAiRealtimeOptions,
} from './openai-realtime.options';
import { OpenAiRealtimeSession } from './openai-realtime.session';
import { buildSessionUpdate } from './openai-realtime-session-update';
import { openRealtimeSocket } from './openai-realtime-socket';

/**
 * Speech-to-speech through the OpenAI Realtime API (or any server speaking its protocol). With the
 * default 'mulaw8k' format, telephone audio goes to the model and back byte for byte.
 *
 * Connecting is bounded: a timeout per attempt, a few attempts with exponential backoff for
 * retryable failures only, and a circuit breaker shared per base URL that fails fast while the
 * endpoint is down.
 */
export class OpenAiRealtimeEngine implements SpeechToSpeechEngine {
  readonly name = OPENAI_REALTIME_ENGINE;
  readonly inputFormat: SpeechAudioFormat;
  readonly outputFormat: SpeechAudioFormat;
  private readonly options: ResolvedOpenAiRealtimeOptions;
  // A private field: util.inspect, JSON.stringify and error reports never see the key.
  readonly #apiKey: string;

  constructor(options: OpenAiRealtimeEngineOptions) {
    this.options = resolveOpenAiRealtimeOptions(options);
    this.#apiKey = options.apiKey;
    this.inputFormat = this.options.audioFormat;
    this.outputFormat = this.options.audioFormat;
  }

  /** The endpoint the circuit breaker is kept for. */
  get endpoint(): string {
    return this.options.baseUrl;
  }

  async connect(options: SpeechToSpeechConnectOptions): Promise<SpeechToSpeechSession> {
    validateConnectOptions(OPENAI_REALTIME_ENGINE, options);
    const settings = this.options;
    const url = new URL(settings.baseUrl);
    url.searchParams.set('model', settings.model);
    const headers: Record<string, string> = { Authorization: `Bearer ${this.#apiKey}` };
    if (settings.protocol === 'beta') headers['OpenAI-Beta'] = 'realtime=v1';
    const sessionUpdate = buildSessionUpdate(settings, options);

    // Keyed by the realtime base URL in the same registry the HTTP engines use (theirs are keyed by
    // circuitKey(engine, base URL), so the two never collide).
    const breaker = settings.circuitBreakers.forEndpoint(settings.baseUrl, settings.circuitBreaker);
    const retryPolicy = retry(
      // An open circuit is retryable for the caller later, but retrying it here would only spin.
      handleWhen((error) => error instanceof EngineError && error.retryable && error.code !== 'circuit_open'),
      {
        maxAttempts: settings.connectAttempts - 1,
        backoff: new ExponentialBackoff({ initialDelay: settings.retryInitialDelayMs, maxDelay: settings.retryMaxDelayMs }),
      },
    );
    const signal = options.signal ?? new AbortController().signal;
    const startedMs = performance.now();
    let attempts = 0;
    try {
      const handshake = await retryPolicy.execute(async () => {
        attempts += 1;
        try {
          return await breaker.policy.execute(
            () => openRealtimeSocket({ url: url.toString(), guard: settings.connectionGuard, headers, sessionUpdate, timeoutMs: settings.connectTimeoutMs, signal }),
          );
        } catch (error) {
          throw asEngineError(error, breaker);
        }
      }, signal);
      return new OpenAiRealtimeSession({
        socket: handshake.socket,
        earlyMessages: handshake.takeOver(),
        callId: options.callId,
        connectTimings: { totalMs: performance.now() - startedMs, attempts },
        closeTimeoutMs: settings.closeTimeoutMs,
      });
    } catch (error) {
      const engineError = asEngineError(error, breaker);
      if (engineError.code === 'cancelled' || !signal.aborted) throw engineError;
      // Aborted while backing off between attempts: the caller asked to stop, so say that.
      throw new EngineError(OPENAI_REALTIME_ENGINE, 'cancelled', 'Connecting to the realtime endpoint was cancelled', false, { cause: engineError });
    }
  }
}

function asEngineError(error: unknown, breaker: EndpointCircuitBreaker): EngineError {
  if (error instanceof EngineError) return error;
  if (isCircuitRefusal(error)) return breaker.openError(OPENAI_REALTIME_ENGINE, error);
  if (error instanceof TaskCancelledError) {
    return new EngineError(OPENAI_REALTIME_ENGINE, 'cancelled', 'Connecting to the realtime endpoint was cancelled', false, { cause: error });
  }
  return new EngineError(OPENAI_REALTIME_ENGINE, 'inference_failed', `Unexpected failure connecting: ${String(error)}`, false, { cause: error });
}
