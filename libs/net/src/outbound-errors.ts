import type { RefusedAddressKind } from './address-policy';

/**
 * OUTBOUND_URL_REFUSED: the URL itself is not allowed (scheme, credentials, a refused host), known
 * before any socket. OUTBOUND_ADDRESS_REFUSED: the address a connection was about to use is refused.
 */
export type OutboundRefusalCode = 'OUTBOUND_URL_REFUSED' | 'OUTBOUND_ADDRESS_REFUSED';

export interface OutboundRefusalDetails {
  /** The host name or IP literal the request was for. */
  host?: string;
  /** The refused address, when an address (not the URL's form) was the problem. */
  address?: string;
  kind?: RefusedAddressKind;
}

/**
 * A request the guard would not make. Its message reads "refused: <reason>", so a caller can
 * show it as it is instead of a bare "fetch failed".
 */
export class OutboundRequestRefused extends Error {
  override readonly name = 'OutboundRequestRefused';

  constructor(
    readonly code: OutboundRefusalCode,
    /** A sentence naming why and how to allow it, without the "refused:" prefix. */
    readonly reason: string,
    readonly details: OutboundRefusalDetails = {},
  ) {
    super(`refused: ${reason}`);
  }
}

/**
 * The guard's own deadline passed. Named 'TimeoutError' like the DOMException of
 * AbortSignal.timeout, so code that checks `error.name === 'TimeoutError'` keeps working.
 */
export class OutboundTimeoutError extends Error {
  override readonly name = 'TimeoutError';
  readonly code = 'OUTBOUND_TIMEOUT';

  constructor(
    /** The origin only: a tenant's URL may carry tokens in its path or query. */
    readonly origin: string,
    readonly timeoutMs: number,
  ) {
    super(`${origin} did not answer completely within ${timeoutMs} ms`);
  }
}

/** A response body went past the caller's limit; the rest was not read. */
export class ResponseTooLargeError extends Error {
  override readonly name = 'ResponseTooLargeError';
  readonly code = 'OUTBOUND_RESPONSE_TOO_LARGE';

  constructor(readonly maxBytes: number) {
    super(`the response body is larger than ${maxBytes} bytes`);
  }
}

/** Deep enough for undici's TypeError('fetch failed') -> connect error chains; bounded against cycles. */
const MAX_CAUSE_DEPTH = 8;

/**
 * The refusal behind an error, if any: the error itself, or found along `.cause` (undici's fetch
 * rejects with TypeError('fetch failed', { cause })) or inside an AggregateError (Node's
 * multi-address connect).
 */
export function outboundRefusalOf(error: unknown): OutboundRequestRefused | undefined {
  return findRefusal(error, 0);
}

function findRefusal(error: unknown, depth: number): OutboundRequestRefused | undefined {
  if (error instanceof OutboundRequestRefused) return error;
  if (depth >= MAX_CAUSE_DEPTH || typeof error !== 'object' || error === null) return undefined;
  if (error instanceof AggregateError) {
    for (const inner of error.errors) {
      const found = findRefusal(inner, depth + 1);
      if (found !== undefined) return found;
    }
  }
  return findRefusal((error as { cause?: unknown }).cause, depth + 1);
}
