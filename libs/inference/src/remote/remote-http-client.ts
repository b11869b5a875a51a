import { Logger } from '@nestjs/common';
import { DelegateBackoff, handleWhen, retry, type IRetryBackoffContext } from 'cockatiel';
import { EngineError } from '../contracts';
import { canonicalBaseUrl, resolveApiUrl } from './api-url';
import { backoffDelayMs } from './backoff-delay';
import { circuitKey, isCircuitRefusal, sharedRemoteCircuitBreakers, type CircuitBreakerRegistry, type EndpointCircuitBreaker } from './circuit-breaker-registry';
import { RemoteAttempt } from './remote-attempt';
import { RemoteOperation } from './remote-operation';
import { resolveRemotePolicy, type RemotePolicyOptions, type RemotePolicyOverrides } from './remote-policy-options';

/** Bounds one response when the engine kind sets none: far more than any JSON answer needs. */
export const DEFAULT_MAX_RESPONSE_BYTES = 4 * 1024 * 1024;

/** The global fetch, never following a redirect (it would re-send the key to wherever the redirect points). */
const defaultFetch: RemoteFetch = (url, { timeoutMs: _timeoutMs, ...init }) => fetch(url, { ...init, redirect: 'manual' });

/** What remote engines log through: Nest's Logger fits, so does pino or `console`. */
export interface RemoteEngineLogger {
  warn(message: string): void;
}

/** What an engine request sends: always a POST here, with a text or byte body. */
export interface RemoteRequestInit {
  method: 'POST';
  headers: Record<string, string>;
  body: string | Uint8Array;
  signal: AbortSignal;
  /** Deadline for the whole exchange, body included. */
  timeoutMs: number;
}

/** What engines read of an answer: fetch's Response fits, and so does the outbound guard's request. */
export interface RemoteResponse {
  readonly ok: boolean;
  readonly status: number;
  readonly headers: { get(name: string): string | null };
  /** Async iterable chunks; fetch's ReadableStream is one in Node. */
  readonly body: AsyncIterable<Uint8Array> | ReadableStream<Uint8Array> | null;
}

/**
 * How requests leave the process. The server passes its outbound guard's `request` (private
 * addresses refused at connect time, no redirects, a deadline, undici's lean request API); the
 * default is the global fetch, with redirects refused all the same.
 */
export type RemoteFetch = (url: string, init: RemoteRequestInit) => Promise<RemoteResponse>;

/** The connection settings every OpenAI-compatible engine takes, per agent. */
export interface RemoteEndpointOptions {
  /** e.g. https://api.openai.com/v1, https://api.groq.com/openai/v1, http://localhost:11434/v1 */
  baseUrl: string;
  /** Sent as a Bearer token; optional for local servers (vLLM, Ollama, faster-whisper). */
  apiKey?: string;
  model: string;
  /** Extra request headers (e.g. OpenAI-Organization). */
  headers?: Record<string, string>;
  fetch?: RemoteFetch;
  /** Most bytes read from one response (a stream counts in total); this engine kind's default otherwise. */
  maxResponseBytes?: number;
  policy?: RemotePolicyOverrides;
  /** Where this endpoint's circuit breaker lives; the process-wide registry by default. */
  circuitBreakers?: CircuitBreakerRegistry;
  logger?: RemoteEngineLogger;
}

export interface AttemptOutcome<T> {
  value: T;
  /** The attempt that succeeded; still open for streaming the rest of its body. */
  attempt: RemoteAttempt;
}

/**
 * Runs requests to one OpenAI-compatible endpoint with the resilience every remote engine shares:
 * per-attempt timeouts, bounded retries with exponential backoff and jitter (Retry-After honoured)
 * for retryable failures only, and the endpoint's circuit breaker (cockatiel policies).
 *
 * An attempt function resolves once it has its first output. That is where retrying stops: what
 * follows (the rest of a token or audio stream) has already reached the caller and is never
 * replayed, so a later failure goes to the caller as it is and only counts against the breaker
 * (RemoteAttempt.reportLateFailure).
 */
export class RemoteHttpClient {
  readonly policy: RemotePolicyOptions;
  readonly breaker: EndpointCircuitBreaker;
  private readonly logger: RemoteEngineLogger;

  constructor(
    readonly engine: string,
    private readonly endpoint: RemoteEndpointOptions,
    /** This engine kind's defaults (a transcription's headers come later than a stream's). */
    engineDefaults: RemotePolicyOverrides = {},
    /** This engine kind's response size bound (a transcript is small; speech audio is not). */
    private readonly defaultMaxResponseBytes = DEFAULT_MAX_RESPONSE_BYTES,
  ) {
    this.policy = resolveRemotePolicy(endpoint.policy, engineDefaults);
    const registry = endpoint.circuitBreakers ?? sharedRemoteCircuitBreakers;
    this.breaker = registry.forEndpoint(circuitKey(engine, canonicalBaseUrl(endpoint.baseUrl)), this.policy.circuitBreaker);
    this.logger = endpoint.logger ?? new Logger(engine);
    if (endpoint.model.trim() === '') throw new Error(`${engine}: model must not be empty`);
  }

  url(apiPath: `/v1/${string}`): string {
    return resolveApiUrl(this.endpoint.baseUrl, apiPath);
  }

  startOperation(callerSignal?: AbortSignal): RemoteOperation {
    return new RemoteOperation(this.engine, this.policy.timeouts.totalTimeoutMs, callerSignal);
  }

  /**
   * Runs `attempt` until one resolves, a non-retryable error, the retries run out, the circuit is
   * open, or the operation is aborted. Rejects with an EngineError.
   */
  async run<T>(operation: RemoteOperation, attempt: (attempt: RemoteAttempt) => Promise<T>): Promise<AttemptOutcome<T>> {
    const { retry: retryOptions } = this.policy;
    const retryPolicy = retry(
      handleWhen((error) => error instanceof EngineError && error.retryable && !operation.signal.aborted && (error.retryAfterMs ?? 0) <= retryOptions.maxRetryAfterMs),
      {
        maxAttempts: retryOptions.maxRetries,
        backoff: new DelegateBackoff((context: IRetryBackoffContext<unknown>) => {
          const error = 'error' in context.result ? context.result.error : undefined;
          return backoffDelayMs(context.attempt, retryOptions, error instanceof EngineError ? error.retryAfterMs : undefined);
        }),
      },
    );
    retryPolicy.onRetry(({ delay, attempt: retryNumber, ...result }) => {
      const reason = 'error' in result ? result.error.message : 'unexpected result';
      this.logger.warn(`${reason}; retry ${retryNumber}/${retryOptions.maxRetries} in ${Math.round(delay)} ms`);
    });
    const execution = retryPolicy.execute(() => this.attemptOnce(operation, attempt), operation.signal);
    // cockatiel's backoff sleep cannot be interrupted; the race lets a cancel or the total deadline
    // answer at once (the next attempt then sees the aborted operation and stops before sending).
    execution.then(
      // Succeeded after the caller stopped waiting: nobody will read it, so release it now.
      (outcome) => operation.signal.aborted && outcome.attempt.dispose(),
      () => undefined,
    );
    try {
      const outcome = await Promise.race([execution, operation.whenAborted().then(() => undefined)]);
      if (outcome === undefined) throw operation.abortError() ?? new EngineError(this.engine, 'cancelled', `${this.engine}: aborted`, false);
      return outcome;
    } catch (error) {
      if (isCircuitRefusal(error)) throw this.breaker.openError(this.engine, error);
      if (error instanceof EngineError) throw error;
      throw new EngineError(this.engine, 'inference_failed', `${this.engine}: ${String(error)}`, false, { cause: error });
    }
  }

  /**
   * One attempt, through the circuit breaker. Resolves at the first output; the breaker's own
   * execution lasts until the attempt's `completion` (the end of the stream), so a stream that
   * fails halfway counts as a failure. While half-open, cockatiel holds other calls until the
   * trial attempt completes: a few seconds at most, and only after an outage.
   */
  private attemptOnce<T>(operation: RemoteOperation, fn: (attempt: RemoteAttempt) => Promise<T>): Promise<AttemptOutcome<T>> {
    const aborted = operation.abortError();
    if (aborted !== undefined) return Promise.reject(aborted);
    return new Promise((resolve, reject) => {
      this.breaker.policy
        .execute(async () => {
          operation.attempts++;
          const attempt = new RemoteAttempt(operation, {
            engine: this.engine,
            apiKey: this.endpoint.apiKey,
            timeouts: this.policy.timeouts,
            headers: this.endpoint.headers ?? {},
            fetch: this.endpoint.fetch ?? defaultFetch,
            maxResponseBytes: this.endpoint.maxResponseBytes ?? this.defaultMaxResponseBytes,
          });
          let value: T;
          try {
            value = await fn(attempt);
          } catch (error) {
            const failure = attempt.failure(error);
            attempt.dispose();
            operation.lastError = failure;
            throw failure;
          }
          resolve({ value, attempt });
          await attempt.completion;
        })
        // Rejecting here, after cockatiel has counted the failure, means the next call already
        // sees the breaker's new state. A refusal (circuit open) arrives here too. A failure after
        // the first output also lands here, where it is a no-op: the promise has resolved.
        .catch(reject);
    });
  }
}
