import { fetch as undiciFetch } from 'undici';
import type { HostResolver } from './host-resolution';
import { OutboundRequestRefused, OutboundTimeoutError, outboundRefusalOf } from './outbound-errors';
import { OutboundGuard } from './outbound-guard';
import { delay, type LocalHttpServer, startLocalHttpServer } from '@switchboard/testing';

// Only loopback exists here, and only loopback is ever dialled: host names below are answered by
// injected resolvers, never by DNS.

const answering =
  (address: string): HostResolver =>
  async () => [{ address, family: 4 }];

/** Fails the test if anything asks it: proves a path never resolves through DNS at all. */
const noResolver: HostResolver = (host) => Promise.reject(new Error(`unexpected resolution of ${host}`));

describe('OutboundGuard.fetch', () => {
  let server: LocalHttpServer;
  const guards: OutboundGuard[] = [];
  const guard = (allowedHosts: string[], resolver: HostResolver = noResolver) => {
    const created = new OutboundGuard({ allowedHosts, resolver });
    guards.push(created);
    return created;
  };

  beforeEach(async () => {
    server = await startLocalHttpServer((request, response) => {
      if (request.url === '/start') {
        response.writeHead(302, { location: '/second' }).end();
        return;
      }
      if (request.url === '/hang') return; // never answers
      if (request.url === '/echo') {
        const chunks: Buffer[] = [];
        request.on('data', (chunk: Buffer) => chunks.push(chunk));
        request.on('end', () => response.end(`${request.headers['content-type']}\n${Buffer.concat(chunks).toString('latin1')}`));
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
    const error: unknown = await guard([]).fetch(server.url('/x'), { timeoutMs: 2_000 }).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(OutboundRequestRefused);
    expect(error).toMatchObject({ code: 'OUTBOUND_URL_REFUSED', message: expect.stringMatching(/^refused: 127\.0\.0\.1 is a loopback address/) });
    expect(server.connections).toBe(0);
  });

  it('refuses at connect time too, when the URL rule is bypassed (dispatcher used directly)', async () => {
    const error: unknown = await undiciFetch(server.url('/x'), { dispatcher: guard([]).dispatcher }).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(TypeError); // undici's "fetch failed" ...
    expect(outboundRefusalOf(error)).toMatchObject({ code: 'OUTBOUND_ADDRESS_REFUSED', details: { address: '127.0.0.1', kind: 'loopback' } });
    expect(server.connections).toBe(0);
  });

  it('sends a global FormData body as multipart (undici\'s own fetch would send "[object FormData]")', async () => {
    const form = new FormData();
    form.append('model', 'whisper-1');
    form.append('file', new Blob([new Uint8Array([1, 2, 3])], { type: 'audio/wav' }), 'utterance.wav');
    const response = await guard(['127.0.0.1']).fetch(server.url('/echo'), { method: 'POST', body: form as never, headers: { authorization: 'Bearer k' }, timeoutMs: 2_000 });
    const [contentType, ...body] = (await response.text()).split('\n');
    expect(contentType).toMatch(/^multipart\/form-data; boundary=/);
    expect(body.join('\n')).toContain('name="model"');
    expect(body.join('\n')).toContain('filename="utterance.wav"');
  });

  it('reaches the server when its address is allowlisted', async () => {
    const response = await guard(['127.0.0.1']).fetch(server.url('/ok'), { timeoutMs: 2_000 });
    expect(response.status).toBe(200);
    await expect(response.text()).resolves.toBe('hello from /ok');
  });

  it('refuses a host name that resolves to loopback, unwrapping undici’s error', async () => {
    const url = `http://service.test:${server.port}/x`;
    const error: unknown = await guard([], answering('127.0.0.1')).fetch(url, { timeoutMs: 2_000 }).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(OutboundRequestRefused);
    expect((error as OutboundRequestRefused).reason).toBe(
      'service.test resolves to 127.0.0.1, a loopback address; add service.test to OUTBOUND_ALLOWED_HOSTS to allow it',
    );
    expect(server.connections).toBe(0);
  });

  it('connects to a resolved host name when its address or the name is allowlisted', async () => {
    const url = `http://service.test:${server.port}/named`;
    for (const allowed of ['127.0.0.1', 'SERVICE.test']) {
      const response = await guard([allowed], answering('127.0.0.1')).fetch(url, { timeoutMs: 2_000 });
      await expect(response.text()).resolves.toBe('hello from /named');
    }
    expect(server.paths).toEqual(['/named', '/named']);
  });

  it('returns a redirect as it is and never requests its target', async () => {
    const response = await guard(['127.0.0.1']).fetch(server.url('/start'), {
      timeoutMs: 2_000,
      // Even a caller asking for it does not get redirects followed.
      ...({ redirect: 'follow' } as object),
    });
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('/second');
    await delay(50);
    expect(server.paths).toEqual(['/start']);
  });

  it('rejects with OutboundTimeoutError when the server never answers', async () => {
    const started = Date.now();
    const error: unknown = await guard(['127.0.0.1']).fetch(server.url('/hang'), { timeoutMs: 300 }).catch((thrown: unknown) => thrown);
    const elapsed = Date.now() - started;
    expect(error).toBeInstanceOf(OutboundTimeoutError);
    expect(error).toMatchObject({ name: 'TimeoutError', message: `http://127.0.0.1:${server.port} did not answer completely within 300 ms` });
    expect(elapsed).toBeGreaterThanOrEqual(290);
    expect(elapsed).toBeLessThan(1_500);
  });

  it('rejects with the caller’s reason when the caller aborts first', async () => {
    const controller = new AbortController();
    const pending = guard(['127.0.0.1']).fetch(server.url('/hang'), { timeoutMs: 5_000, signal: controller.signal });
    const reason = new Error('call ended');
    setTimeout(() => controller.abort(reason), 50);
    await expect(pending).rejects.toBe(reason);
  });
});

describe('OutboundGuard connector and DNS rebinding', () => {
  /**
   * Two servers on one port: "public" on 127.0.0.2 (allowlisted, standing in for a public
   * address so that nothing leaves the machine) and "internal" on 127.0.0.1 (refused). The
   * resolver answers 127.0.0.2 first and 127.0.0.1 afterwards, as a rebinding DNS server would.
   * Connecting to the checked address reaches "public"; resolving again for the connection would
   * reach "internal"; connecting by name through the system resolver would fail (rebind.test does
   * not exist).
   */
  async function startPair(): Promise<{ publicServer: LocalHttpServer; internalServer: LocalHttpServer }> {
    for (let attempt = 0; ; attempt++) {
      const publicServer = await startLocalHttpServer((_request, response) => response.writeHead(200, { connection: 'close' }).end('public'), '127.0.0.2');
      try {
        const internalServer = await startLocalHttpServer((_request, response) => response.end('internal'), '127.0.0.1', publicServer.port);
        return { publicServer, internalServer };
      } catch (error) {
        await publicServer.close();
        if (attempt >= 5) throw error; // the port was taken on 127.0.0.1: try another
      }
    }
  }

  it('connects to the address it checked, resolving once per connection', async () => {
    const { publicServer, internalServer } = await startPair();
    const answers = ['127.0.0.2', '127.0.0.1'];
    const resolver = jest.fn<ReturnType<HostResolver>, Parameters<HostResolver>>(async () => {
      const address = answers.shift() ?? '127.0.0.1';
      return [{ address, family: 4 }];
    });
    const guard = new OutboundGuard({ allowedHosts: ['127.0.0.2'], resolver });
    try {
      const url = `http://rebind.test:${publicServer.port}/`;
      const first = await guard.fetch(url, { timeoutMs: 2_000 });
      await expect(first.text()).resolves.toBe('public');
      expect(resolver).toHaveBeenCalledTimes(1);

      // The server closed that connection, so the next request needs a new one, and the name
      // now resolves to the internal address: refused.
      const error: unknown = await guard.fetch(url, { timeoutMs: 2_000 }).catch((thrown: unknown) => thrown);
      expect(error).toMatchObject({ code: 'OUTBOUND_ADDRESS_REFUSED', details: { address: '127.0.0.1' } });
      expect(resolver).toHaveBeenCalledTimes(2);
      expect(internalServer.connections).toBe(0);
      expect(publicServer.paths).toEqual(['/']);
    } finally {
      await guard.close();
      await Promise.all([publicServer.close(), internalServer.close()]);
    }
  });

  it('refuses when any resolved address is refused, even if the first is allowed', async () => {
    const server = await startLocalHttpServer((_request, response) => response.end('x'), '127.0.0.2');
    const resolver: HostResolver = async () => [
      { address: '127.0.0.2', family: 4 },
      { address: '10.0.0.1', family: 4 },
    ];
    const guard = new OutboundGuard({ allowedHosts: ['127.0.0.2'], resolver });
    try {
      const error: unknown = await guard.fetch(`http://mixed.test:${server.port}/`, { timeoutMs: 2_000 }).catch((thrown: unknown) => thrown);
      expect(error).toMatchObject({ code: 'OUTBOUND_ADDRESS_REFUSED', details: { address: '10.0.0.1', kind: 'private' } });
      expect(server.connections).toBe(0);
    } finally {
      await guard.close();
      await server.close();
    }
  });

  it('passes a resolution failure on as the resolver’s error', async () => {
    const resolver: HostResolver = () => Promise.reject(Object.assign(new Error('getaddrinfo ENOTFOUND gone.test'), { code: 'ENOTFOUND' }));
    const guard = new OutboundGuard({ allowedHosts: [], resolver });
    try {
      const error: unknown = await guard.fetch('http://gone.test:59999/', { timeoutMs: 2_000 }).catch((thrown: unknown) => thrown);
      expect(outboundRefusalOf(error)).toBeUndefined();
      expect((error as { cause?: { code?: string } }).cause?.code).toBe('ENOTFOUND');
    } finally {
      await guard.close();
    }
  });
});
