/** Why an engine call failed. `retryable` says whether the same request may succeed if repeated. */
export type EngineErrorCode =
  | 'timeout'
  | 'unavailable'
  | 'rate_limited'
  | 'unauthorized'
  | 'bad_request'
  | 'malformed_response'
  | 'circuit_open'
  | 'model_missing'
  | 'inference_failed'
  | 'cancelled'
  /** The outbound guard refused the endpoint (a private address, a refused URL): fix the config, do not retry. */
  | 'endpoint_refused'
  /** The server sent more than this engine reads from one response. */
  | 'response_too_large';

export class EngineError extends Error {
  override readonly name = 'EngineError';

  constructor(
    /** The engine that failed, e.g. 'openai-stt', 'silero-vad'. */
    readonly engine: string,
    readonly code: EngineErrorCode,
    message: string,
    readonly retryable: boolean,
    options?: { cause?: unknown; httpStatus?: number; retryAfterMs?: number },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.httpStatus = options?.httpStatus;
    this.retryAfterMs = options?.retryAfterMs;
  }

  readonly httpStatus: number | undefined;
  /** How long to wait before repeating, when the server (Retry-After) or an open circuit says. */
  readonly retryAfterMs: number | undefined;
}
