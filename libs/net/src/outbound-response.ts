import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { ResponseTooLargeError } from './outbound-errors';

/** Header lookup by name, like fetch's Headers.get: a repeated header reads as one comma-joined value. */
export class ResponseHeaders {
  constructor(private readonly raw: IncomingHttpHeaders) {}

  get(name: string): string | null {
    const value = this.raw[name.toLowerCase()];
    if (value === undefined) return null;
    return Array.isArray(value) ? value.join(', ') : value;
  }
}

/**
 * What OutboundGuard.request answers: fetch's Response reduced to what streaming callers read, on
 * undici's request API. The body is a Node stream of Buffers (async iterable); stopping the
 * iteration early, or the request's signal aborting, closes the connection.
 */
export interface OutboundResponse {
  readonly status: number;
  readonly ok: boolean;
  readonly headers: ResponseHeaders;
  readonly body: AsyncIterable<Uint8Array>;
}

/**
 * The body, failing with ResponseTooLargeError once more than `maxBytes` arrived in total (the
 * stream is destroyed, which closes the connection). A declared Content-Length over the bound
 * fails before anything is read.
 */
export async function* cappedBody(body: Readable, headers: ResponseHeaders, maxBytes: number): AsyncGenerator<Uint8Array> {
  const declared = headers.get('content-encoding') === null ? Number(headers.get('content-length') ?? NaN) : NaN;
  if (Number.isFinite(declared) && declared > maxBytes) {
    body.destroy();
    throw new ResponseTooLargeError(maxBytes);
  }
  let total = 0;
  for await (const chunk of body as AsyncIterable<Uint8Array>) {
    total += chunk.byteLength;
    if (total > maxBytes) {
      body.destroy();
      throw new ResponseTooLargeError(maxBytes);
    }
    yield chunk;
  }
}
