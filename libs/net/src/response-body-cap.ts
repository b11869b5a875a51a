import { ReadableStream } from 'node:stream/web';
import { Response } from 'undici';
import { ResponseTooLargeError } from './outbound-errors';

/** What the helpers need from a response: undici's and Node's global Response both fit. */
export interface BodySource {
  readonly body: ReadableStream<Uint8Array> | null;
  readonly headers: { get(name: string): string | null };
}

/** Statuses whose Response may not be constructed with a body (fetch standard). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

function declaredLengthOver(response: BodySource, maxBytes: number): boolean {
  // With a content-encoding the header counts compressed bytes, not what the reader will get.
  if (response.headers.get('content-encoding') !== null) return false;
  const declared = Number(response.headers.get('content-length') ?? NaN);
  return Number.isFinite(declared) && declared > maxBytes;
}

/**
 * Reads the whole body, refusing past `maxBytes`: the stream is cancelled at once (which closes the
 * connection) instead of being buffered, and a declared Content-Length over the limit fails before
 * reading at all. Rejects with ResponseTooLargeError.
 */
export async function readBodyCapped(response: BodySource, maxBytes: number): Promise<Buffer> {
  if (response.body === null) return Buffer.alloc(0);
  if (declaredLengthOver(response, maxBytes)) {
    await response.body.cancel().catch(() => undefined);
    throw new ResponseTooLargeError(maxBytes);
  }
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return Buffer.concat(chunks, total);
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw new ResponseTooLargeError(maxBytes);
    }
    chunks.push(value);
  }
}

/**
 * The same bytes, erroring with ResponseTooLargeError once more than `maxBytes` have passed in
 * total, and cancelling the source then. Pull-based with no read-ahead (highWaterMark 0), so a
 * stream read incrementally (SSE, audio) is only ever one chunk ahead of its reader.
 */
export function capBodyStream(source: ReadableStream<Uint8Array>, maxBytes: number): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  let total = 0;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) {
          controller.close();
          return;
        }
        total += value.byteLength;
        if (total > maxBytes) {
          const error = new ResponseTooLargeError(maxBytes);
          controller.error(error);
          await reader.cancel(error).catch(() => undefined);
          return;
        }
        controller.enqueue(value);
      },
      cancel(reason) {
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}

/**
 * A Response whose body errors past `maxBytes` (text(), json() and getReader() alike reject with
 * ResponseTooLargeError). Status and headers are kept; `url` and `redirected` are those of a
 * constructed Response (empty, false), so log the URL you requested, not response.url.
 */
export function capResponseBody(response: Response, maxBytes: number): Response {
  if (response.body === null || NULL_BODY_STATUSES.has(response.status)) return response;
  return new Response(capBodyStream(response.body as ReadableStream<Uint8Array>, maxBytes), {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}
