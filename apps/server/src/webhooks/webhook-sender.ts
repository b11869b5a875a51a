import { outboundRefusalOf } from '@switchboard/net';

/** The first bytes of a response kept for the attempt log. */
export const RESPONSE_EXCERPT_BYTES = 1024;

export interface WebhookSendResult {
  /** 2xx: the receiver took it. A 3xx is a failure too (redirects are not followed). */
  ok: boolean;
  statusCode: number | null;
  latencyMs: number;
  /** 'timeout' | 'connection_error: <code>' when no response came; null otherwise. */
  error: string | null;
  responseExcerpt: string | null;
}

/**
 * How a delivery leaves the process: the server passes its outbound guard's fetch, which refuses
 * private addresses at connect time and never follows a redirect (a receiver must answer itself;
 * following one would send the signed event to a URL the subscription never named).
 */
export type WebhookFetch = (url: string, init: RequestInit & { timeoutMs: number }) => Promise<Response>;

/**
 * POSTs one attempt. Never throws: every failure (timeout, refused connection or address, TLS, DNS)
 * is an outcome to log. The timeout covers the whole exchange, reading the excerpt included.
 */
export async function sendWebhook(
  input: { url: string; body: string; headers: Record<string, string>; timeoutMs: number },
  send: WebhookFetch,
): Promise<WebhookSendResult> {
  const started = performance.now();
  const signal = AbortSignal.timeout(input.timeoutMs);
  const elapsed = () => Math.round((performance.now() - started) * 1000) / 1000;
  let response: Response;
  try {
    response = await send(input.url, { method: 'POST', headers: input.headers, body: input.body, signal, timeoutMs: input.timeoutMs });
  } catch (error) {
    return { ok: false, statusCode: null, latencyMs: elapsed(), error: describeFailure(error, signal), responseExcerpt: null };
  }
  const responseExcerpt = await readExcerpt(response);
  return {
    ok: response.status >= 200 && response.status < 300,
    statusCode: response.status,
    latencyMs: elapsed(),
    error: null,
    responseExcerpt,
  };
}

/** Up to RESPONSE_EXCERPT_BYTES of the body; the rest is never read. A body cut short keeps what came. */
async function readExcerpt(response: Response): Promise<string | null> {
  if (!response.body) return null;
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < RESPONSE_EXCERPT_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } catch {
    // Timed out or reset mid-body: the status already says what the receiver decided.
  } finally {
    void reader.cancel().catch(() => undefined);
  }
  const bytes = Buffer.concat(chunks).subarray(0, RESPONSE_EXCERPT_BYTES);
  // Postgres text cannot hold U+0000; a cut multi-byte character decodes as U+FFFD.
  return new TextDecoder().decode(bytes).replaceAll('\u0000', '\uFFFD');
}

function describeFailure(error: unknown, signal: AbortSignal): string {
  if (signal.aborted) return 'timeout';
  // The guard's own words say why (e.g. "refused: 10.0.0.1 is a private address").
  const refusal = outboundRefusalOf(error);
  if (refusal) return refusal.message;
  return `connection_error: ${errorCode(error)}`;
}

/** undici wraps the socket error: TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } }). */
function errorCode(error: unknown): string {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current !== null && typeof current === 'object'; depth++) {
    const record = current as { code?: unknown; cause?: unknown };
    if (typeof record.code === 'string') return record.code;
    current = record.cause;
  }
  return error instanceof Error ? error.message : 'unknown';
}
