import type { HostResolver } from './host-resolution';
import { OutboundRequestRefused, OutboundTimeoutError, ResponseTooLargeError } from './outbound-errors';
import { OutboundGuard } from './outbound-guard';
import type { OutboundResponse } from './outbound-response';
import { delay, type LocalHttpServer, startLocalHttpServer } from '@switchboard/testing';

/** Fails the test if anything asks it: these requests are all to IP literals. */
const noResolver: HostResolver = (host) => Promise.reject(new Error(`unexpected resolution of ${host}`));

async function bodyText(response: OutboundResponse): Promise<string> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of response.body) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

describe('OutboundGuard.request (the engines\' streaming path)', () => {
  let server: LocalHttpServer;
  const guards: OutboundGuard[] = [];
  const guard = (allowedHosts: string[]) => {
    const created = new OutboundGuard({ allowedHosts, resolver: noResolver });
    guards.push(created);
    return created;
  };

  beforeEach(async () => {
    server = await startLocalHttpServer((request, response) => {
      if (request.url === '/start') return void response.writeHead(302, { location: '/second' }).end();
      if (request.url === '/hang') return; // never answers
      if (request.url === '/trickle') {
        // Headers at once, then a chunk every 100 ms for a second.
        response.writeHead(200, { 'content-type': 'audio/pcm' });
        let sent = 0;
        const timer = setInterval(() => {
          response.write(Buffer.alloc(100, sent));
          if (++sent === 10) {
            clearInterval(timer);
            response.end();
          }
        }, 100);
        response.on('close', () => clearInterval(timer));
        return;
      }
      if (request.url?.startsWith('/echo')) {
        const chunks: Buffer[] = [];
        request.on('data', (chunk: Buffer) => chunks.push(chunk));
        request.on('end', () =>
          response
            .writeHead(201, { 'set-cookie': ['a=1', 'b=2'], 'x-method': request.method ?? '' })
            .end(`${request.headers['content-type']}|${request.headers.authorization}|${Buffer.concat(chunks).toString('utf8')}`),
        );
        return;
      }
      response.end(`hello from ${request.url}`);
    });
  });

  afterEach(async () => {
    await Promise.all(guards.splice(0).map((created) => created.close()));
    await server.close();
  });

  it('refuses a loopback URL before opening any socket', async () => {
    const error: unknown = await guard([]).request(server.url('/x'), { timeoutMs: 2_000 }).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(OutboundRequestRefused);
    expect(error).toMatchObject({ code: 'OUTBOUND_URL_REFUSED', message: expect.stringMatching(/^refused: 127\.0\.0\.1 is a loopback address/) });
    expect(server.connections).toBe(0);
  });

  it('sends the method, headers and body, and answers status, headers and body', async () => {
    const response = await guard(['127.0.0.1']).request(server.url('/echo?x=1'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer k' },
      body: Buffer.from('{"a":1}'),
      timeoutMs: 2_000,
    });
    expect(response.status).toBe(201);
    expect(response.ok).toBe(true);
    expect(response.headers.get('X-Method')).toBe('POST');
    expect(response.headers.get('set-cookie')).toBe('a=1, b=2');
    expect(response.headers.get('absent')).toBeNull();
    await expect(bodyText(response)).resolves.toBe('application/json|Bearer k|{"a":1}');
    expect(server.paths).toEqual(['/echo?x=1']);
  });

  it('returns a redirect as it is and never requests its target', async () => {
    const response = await guard(['127.0.0.1']).request(server.url('/start'), { method: 'POST', body: 'x', timeoutMs: 2_000 });
    expect(response.status).toBe(302);
    expect(response.ok).toBe(false);
    expect(response.headers.get('location')).toBe('/second');
    await bodyText(response);
    await delay(50);
    expect(server.paths).toEqual(['/start']);
  });

  it('rejects with OutboundTimeoutError when the server never answers', async () => {
    const error: unknown = await guard(['127.0.0.1']).request(server.url('/hang'), { timeoutMs: 300 }).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(OutboundTimeoutError);
    expect(error).toMatchObject({ message: `http://127.0.0.1:${server.port} did not answer completely within 300 ms` });
  });

  it('fails a body still streaming at the deadline with OutboundTimeoutError', async () => {
    const response = await guard(['127.0.0.1']).request(server.url('/trickle'), { timeoutMs: 350 });
    expect(response.status).toBe(200);
    await expect(bodyText(response)).rejects.toBeInstanceOf(OutboundTimeoutError);
  });

  it('rejects with the caller’s reason when the caller aborts, before the answer or during the body', async () => {
    const reason = new Error('call ended');
    const early = new AbortController();
    const pending = guard(['127.0.0.1']).request(server.url('/hang'), { timeoutMs: 5_000, signal: early.signal });
    setTimeout(() => early.abort(reason), 50);
    await expect(pending).rejects.toBe(reason);

    const late = new AbortController();
    const response = await guard(['127.0.0.1']).request(server.url('/trickle'), { timeoutMs: 5_000, signal: late.signal });
    setTimeout(() => late.abort(reason), 250);
    await expect(bodyText(response)).rejects.toBe(reason);
  });

  it('fails with ResponseTooLargeError past maxResponseBytes and stops reading', async () => {
    const response = await guard(['127.0.0.1']).request(server.url('/trickle'), { timeoutMs: 5_000, maxResponseBytes: 250 });
    const started = Date.now();
    await expect(bodyText(response)).rejects.toBeInstanceOf(ResponseTooLargeError);
    expect(Date.now() - started).toBeLessThan(800); // the third chunk, not the whole second
  });

  it('streams a whole body within the deadline', async () => {
    const response = await guard(['127.0.0.1']).request(server.url('/trickle'), { timeoutMs: 5_000 });
    const chunks: number[] = [];
    for await (const chunk of response.body) chunks.push(chunk.byteLength);
    expect(chunks.reduce((sum, size) => sum + size, 0)).toBe(1000);
  });
});
