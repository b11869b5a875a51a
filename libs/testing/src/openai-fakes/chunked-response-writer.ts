import type { ServerResponse } from 'node:http';
import type { FakeFailure } from './fake-openai-types';

export interface ChunkedResponse {
  headers: Record<string, string>;
  chunks: Array<string | Uint8Array>;
  chunkDelayMs?: number;
  /** Only 'stall' and 'reset' change how the body is written; others are handled before this. */
  failure?: FakeFailure;
}

/**
 * Writes a 200 response as separate body writes, pausing between them, and can stall (stop
 * writing with the connection open) or reset (destroy the socket) after a given number of chunks.
 * Stops quietly when the client goes away.
 */
export async function writeChunkedResponse(res: ServerResponse, response: ChunkedResponse): Promise<void> {
  const { failure } = response;
  if (failure?.kind === 'reset' && failure.afterChunks === undefined) {
    res.socket?.destroy();
    return;
  }
  res.writeHead(200, response.headers);
  res.flushHeaders();
  const breakAt = failure?.kind === 'stall' || failure?.kind === 'reset' ? (failure.afterChunks ?? 0) : Number.POSITIVE_INFINITY;
  for (let index = 0; index < response.chunks.length; index++) {
    if (index === breakAt) break;
    if (response.chunkDelayMs) await delay(response.chunkDelayMs, res);
    if (res.destroyed) return;
    res.write(response.chunks[index]);
  }
  if (failure?.kind === 'stall') return; // silent, open until the client or close() ends it
  if (failure?.kind === 'reset') {
    // Let the written chunks reach the client before the connection dies.
    await delay(5, res);
    res.socket?.destroy();
    return;
  }
  res.end();
}

export function delay(ms: number, res?: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    res?.once('close', done);
    function done() {
      clearTimeout(timer);
      res?.off('close', done);
      resolve();
    }
  });
}
