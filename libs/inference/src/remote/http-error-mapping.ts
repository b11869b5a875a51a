import { EngineError } from '../contracts';

/**
 * Maps what an OpenAI-compatible server answered (or failed to answer) to an EngineError whose
 * `retryable` flag says whether repeating the same request can help. Server messages are kept
 * (they say which model or parameter was wrong) but the API key is scrubbed from them: some
 * providers echo part of the key back in 401 bodies.
 */

const SERVER_MESSAGE_MAX_CHARS = 300;

/** Network failures where the server may well answer the next attempt. */
const TRANSIENT_NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'EAI_AGAIN',
  'ENOTFOUND',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CLOSED',
]);

/** Header lookup as fetch's Headers and the outbound guard's responses both offer it. */
export interface HeaderLookup {
  get(name: string): string | null;
}

export interface HttpFailure {
  engine: string;
  status: number;
  headers: HeaderLookup;
  bodyText: string;
  /** Redacted from every message. */
  apiKey?: string;
  nowMs?: number;
}

export function engineErrorFromResponse(failure: HttpFailure): EngineError {
  const { engine, status } = failure;
  const serverMessage = redactSecret(describeServerError(failure.bodyText), failure.apiKey);
  const message = `${engine}: HTTP ${status}${serverMessage ? `: ${serverMessage}` : ''}`;
  const httpStatus = status;
  if (status === 401 || status === 403) {
    return new EngineError(engine, 'unauthorized', `${message} (check the API key for this agent)`, false, { httpStatus });
  }
  if (status === 429) {
    // OpenAI answers 429 both for "slow down" and for an exhausted billing quota; only the first
    // gets better by waiting.
    const quotaExhausted = /insufficient_quota/.test(failure.bodyText);
    const retryAfterMs = parseRetryAfterMs(failure.headers, failure.nowMs ?? Date.now());
    return new EngineError(engine, 'rate_limited', message, !quotaExhausted, { httpStatus, retryAfterMs });
  }
  if (status === 408) return new EngineError(engine, 'timeout', message, true, { httpStatus });
  // 409 is how OpenAI reports a lock conflict on its side; its SDK retries it too.
  if (status >= 500 || status === 409) return new EngineError(engine, 'unavailable', message, true, { httpStatus });
  if (status === 404) {
    return new EngineError(engine, 'bad_request', `${message} (check the base URL and the model name)`, false, { httpStatus });
  }
  return new EngineError(engine, 'bad_request', message, false, { httpStatus });
}

/** `retry-after-ms` (OpenAI), then `retry-after` as seconds or an HTTP date. */
export function parseRetryAfterMs(headers: HeaderLookup, nowMs: number): number | undefined {
  const milliseconds = headers.get('retry-after-ms');
  if (milliseconds !== null && /^\s*\d+(\.\d+)?\s*$/.test(milliseconds)) return Math.ceil(Number(milliseconds));
  const value = headers.get('retry-after');
  if (value === null) return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(value)) return Math.ceil(Number(value) * 1000);
  const dateMs = Date.parse(value);
  if (Number.isNaN(dateMs)) return undefined;
  return Math.max(0, dateMs - nowMs);
}

/**
 * A thrown fetch/stream failure that is not one of our own aborts: network errors are retryable,
 * anything else (an invalid URL, a bug) is not.
 */
export function engineErrorFromThrown(engine: string, error: unknown, apiKey?: string): EngineError {
  if (error instanceof EngineError) return error;
  const code = networkErrorCode(error);
  const detail = redactSecret(describeThrown(error), apiKey);
  // The server's outbound guard refused the endpoint (a private address, a refused URL): the
  // config is wrong, and no retry will change that.
  if (code === 'OUTBOUND_URL_REFUSED' || code === 'OUTBOUND_ADDRESS_REFUSED') {
    return new EngineError(engine, 'endpoint_refused', `${engine}: ${detail}`, false, { cause: error });
  }
  if (code !== undefined && TRANSIENT_NETWORK_CODES.has(code)) {
    return new EngineError(engine, 'unavailable', `${engine}: server unreachable or connection lost (${code}): ${detail}`, true, { cause: error });
  }
  if (error instanceof TypeError && /fetch failed/.test(error.message)) {
    return new EngineError(engine, 'bad_request', `${engine}: request could not be sent: ${detail}`, false, { cause: error });
  }
  return new EngineError(engine, 'inference_failed', `${engine}: ${detail}`, false, { cause: error });
}

export function redactSecret(text: string, secret: string | undefined): string {
  if (secret === undefined || secret.length < 4) return text;
  return text.split(secret).join('[redacted]');
}

function networkErrorCode(error: unknown): string | undefined {
  // fetch wraps the socket error: TypeError('fetch failed' | 'terminated', { cause: { code } }).
  for (let current: unknown = error, depth = 0; current !== undefined && current !== null && depth < 4; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

function describeThrown(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.message}${cause}`;
}

/** `{error: {message}}` (OpenAI, vLLM, Groq), `{error: "..."}` (Ollama), `{detail}` (FastAPI servers). */
function describeServerError(bodyText: string): string {
  const trimmed = bodyText.trim();
  if (trimmed === '') return '';
  let text = trimmed;
  try {
    const body = JSON.parse(trimmed) as { error?: unknown; detail?: unknown; message?: unknown };
    const candidate =
      typeof body.error === 'object' && body.error !== null ? (body.error as { message?: unknown }).message : body.error ?? body.detail ?? body.message;
    if (typeof candidate === 'string') text = candidate;
    else if (candidate !== undefined) text = JSON.stringify(candidate);
  } catch {
    // Not JSON (an HTML error page from a proxy, plain text): keep the start of it.
  }
  return text.length > SERVER_MESSAGE_MAX_CHARS ? `${text.slice(0, SERVER_MESSAGE_MAX_CHARS)}...` : text;
}
