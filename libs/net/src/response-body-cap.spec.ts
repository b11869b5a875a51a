import type { ServerResponse } from 'node:http';
import { ResponseTooLargeError } from './outbound-errors';
import { OutboundGuard } from './outbound-guard';
import { capResponseBody, readBodyCapped } from './response-body-cap';
import { delay, type LocalHttpServer, startLocalHttpServer } from '@switchboard/testing';

const KiB = 1024;
const MiB = 1024 * KiB;
const CHUNK = Buffer.alloc(64 * KiB, 0x61);

/** What the server managed to send before the client went away, and whether it got to the end. */
interface SendRecord {
  bytesSent: number;
  finished: boolean;
  closed: Promise<void>;
}

/** Sends (up to) `total` more bytes in 64 KiB chunks, pausing between them, and stops once the client has gone. */
function sendSlowly(response: ServerResponse, total: number, record: SendRecord, headers: Record<string, string> = {}): void {
  let gone = false;
  response.on('close', () => (gone = true));
  if (!response.headersSent) response.writeHead(200, { 'content-type': 'application/octet-stream', ...headers });
  void (async () => {
    while (record.bytesSent < total && !gone) {
      response.write(CHUNK);
      record.bytesSent += CHUNK.byteLength;
      await delay(5);
    }
    if (!gone) {
      record.finished = true;
      response.end();
    }
  })();
}

describe('response body caps (real server)', () => {
  let server: LocalHttpServer;
  let guard: OutboundGuard;
  let record: SendRecord;
  let handler: (response: ServerResponse) => void;

  beforeEach(async () => {
    let closed!: () => void;
    record = { bytesSent: 0, finished: false, closed: new Promise((resolve) => (closed = resolve)) };
    server = await startLocalHttpServer((_request, response) => {
      response.on('close', () => closed());
      handler(response);
    });
    guard = new OutboundGuard({ allowedHosts: ['127.0.0.1'] });
  });

  afterEach(async () => {
    await guard.close();
    await server.close();
  });

  it('readBodyCapped stops reading past the cap and the connection is dropped before the body ends', async () => {
    handler = (response) => sendSlowly(response, 2 * MiB, record);
    const response = await guard.fetch(server.url('/big'), { timeoutMs: 10_000 });
    await expect(readBodyCapped(response, 1 * MiB)).rejects.toThrow(ResponseTooLargeError);
    await record.closed;
    expect(record.finished).toBe(false);
    expect(record.bytesSent).toBeLessThan(2 * MiB);
  });

  it('readBodyCapped fails before reading when Content-Length already says too much', async () => {
    handler = (response) => sendSlowly(response, 2 * MiB, record, { 'content-length': String(2 * MiB) });
    const response = await guard.fetch(server.url('/declared'), { timeoutMs: 10_000 });
    await expect(readBodyCapped(response, 1 * MiB)).rejects.toMatchObject({ code: 'OUTBOUND_RESPONSE_TOO_LARGE', maxBytes: MiB });
    await record.closed;
    expect(record.finished).toBe(false);
    expect(record.bytesSent).toBeLessThan(1 * MiB);
  });

  it('readBodyCapped returns a body within the cap', async () => {
    handler = (response) => sendSlowly(response, 256 * KiB, record);
    const response = await guard.fetch(server.url('/small'), { timeoutMs: 10_000 });
    const body = await readBodyCapped(response, 1 * MiB);
    expect(body.byteLength).toBe(256 * KiB);
  });

  it('capResponseBody delivers chunks as they arrive, then errors once the total passes the cap', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    handler = (response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write(CHUNK);
      // The rest only after the client has read the first chunk: a wrapper that buffered the
      // whole body would wait here forever.
      void released.then(() => sendSlowly(response, 2 * MiB, record));
    };
    const response = capResponseBody(await guard.fetch(server.url('/stream'), { timeoutMs: 10_000 }), 300 * KiB);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const reader = response.body!.getReader();
    const first = await reader.read();
    expect(first.value?.byteLength).toBeGreaterThan(0);
    release();
    let delivered = first.value?.byteLength ?? 0;
    const failure: unknown = await (async () => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return undefined;
        delivered += value.byteLength;
      }
    })().catch((thrown: unknown) => thrown);
    expect(failure).toBeInstanceOf(ResponseTooLargeError);
    expect(delivered).toBeLessThanOrEqual(300 * KiB);
    await record.closed;
    expect(record.finished).toBe(false);
  });

  it('fetch with maxResponseBytes makes text() reject past the cap and pass within it', async () => {
    handler = (response) => sendSlowly(response, 2 * MiB, record);
    const tooBig = await guard.fetch(server.url('/big'), { timeoutMs: 10_000, maxResponseBytes: 1 * MiB });
    await expect(tooBig.text()).rejects.toThrow(ResponseTooLargeError);

    handler = (response) => response.end('{"ok":true}');
    const small = await guard.fetch(server.url('/json'), { timeoutMs: 10_000, maxResponseBytes: 1 * MiB });
    await expect(small.json()).resolves.toEqual({ ok: true });
  });

  it('a body read past the deadline errors with the timeout', async () => {
    handler = (response) => {
      response.writeHead(200);
      response.write('partial');
    };
    const response = await guard.fetch(server.url('/stall'), { timeoutMs: 300 });
    await expect(response.text()).rejects.toMatchObject({ name: 'TimeoutError', code: 'OUTBOUND_TIMEOUT' });
  });
});
