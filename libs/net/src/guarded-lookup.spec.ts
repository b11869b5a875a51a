import type { LookupAddress, LookupOptions } from 'node:dns';
import type { AddressInfo } from 'node:net';
import WebSocket, { WebSocketServer } from 'ws';
import type { HostResolver } from './host-resolution';
import { OutboundRequestRefused, outboundRefusalOf } from './outbound-errors';
import { OutboundGuard } from './outbound-guard';

// The realtime engine's WebSocket: `ws` resolves through `lookup`, so the guard's lookup is what
// decides. Host names are answered by the injected resolver; only 127.0.0.1 is dialled.

const toLoopback: HostResolver = async () => [{ address: '127.0.0.1', family: 4 }];

function lookupOnce(guard: OutboundGuard, host: string, options: LookupOptions): Promise<{ error: unknown; address: unknown; family: unknown }> {
  return new Promise((resolve) => guard.lookup(host, options, (error, address, family) => resolve({ error, address, family })));
}

describe('OutboundGuard.lookup with the ws package', () => {
  let server: WebSocketServer;
  let port: number;
  let connections: number;

  beforeEach(async () => {
    connections = 0;
    server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    server.on('connection', (socket) => {
      connections++;
      socket.send('welcome');
    });
    await new Promise<void>((resolve) => server.once('listening', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterEach(async () => {
    for (const client of server.clients) client.terminate();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  function connect(guard: OutboundGuard): Promise<{ opened: boolean; message?: string; error?: unknown }> {
    const socket = new WebSocket(`ws://realtime.test:${port}/v1/realtime`, { lookup: guard.lookup });
    return new Promise((resolve) => {
      socket.once('message', (data: Buffer) => {
        socket.close();
        resolve({ opened: true, message: data.toString() });
      });
      socket.once('error', (error) => resolve({ opened: false, error }));
    });
  }

  it('refuses a host name that resolves to loopback', async () => {
    const result = await connect(new OutboundGuard({ allowedHosts: [], resolver: toLoopback }));
    expect(result.opened).toBe(false);
    const refusal = outboundRefusalOf(result.error);
    expect(refusal).toBeInstanceOf(OutboundRequestRefused);
    expect(refusal).toMatchObject({ code: 'OUTBOUND_ADDRESS_REFUSED', details: { host: 'realtime.test', address: '127.0.0.1' } });
    expect(connections).toBe(0);
  });

  it('connects when the address is allowlisted', async () => {
    const result = await connect(new OutboundGuard({ allowedHosts: ['127.0.0.1'], resolver: toLoopback }));
    expect(result).toEqual({ opened: true, message: 'welcome' });
    expect(connections).toBe(1);
  });

  it('connects when the host name is allowlisted', async () => {
    const result = await connect(new OutboundGuard({ allowedHosts: ['realtime.test'], resolver: toLoopback }));
    expect(result).toEqual({ opened: true, message: 'welcome' });
  });

  it('leaves IP-literal URLs to checkUrl (Node does not call lookup for them)', () => {
    const guard = new OutboundGuard({ allowedHosts: [] });
    expect(guard.checkUrl('ws://127.0.0.1:1/x', 'ws')).toEqual({ ok: false, reason: expect.stringContaining('127.0.0.1 is a loopback address') });
    expect(guard.checkUrl('wss://realtime.example.com/v1', 'ws')).toEqual({ ok: true });
  });
});

describe('OutboundGuard.lookup call forms', () => {
  const resolver: HostResolver = async () => [
    { address: '2606:4700::1', family: 6 },
    { address: '8.8.8.8', family: 4 },
  ];
  const guard = new OutboundGuard({ allowedHosts: [], resolver });

  it('answers every address for all: true', async () => {
    const { error, address } = await lookupOnce(guard, 'api.example.com', { all: true });
    expect(error).toBeNull();
    expect(address).toEqual<LookupAddress[]>([
      { address: '2606:4700::1', family: 6 },
      { address: '8.8.8.8', family: 4 },
    ]);
  });

  it('answers the first address and its family otherwise', async () => {
    await expect(lookupOnce(guard, 'api.example.com', {})).resolves.toEqual({ error: null, address: '2606:4700::1', family: 6 });
  });

  it('honours a requested family', async () => {
    await expect(lookupOnce(guard, 'api.example.com', { family: 4 })).resolves.toEqual({ error: null, address: '8.8.8.8', family: 4 });
    const { address } = await lookupOnce(guard, 'api.example.com', { family: 'IPv6', all: true });
    expect(address).toEqual([{ address: '2606:4700::1', family: 6 }]);
  });

  it('fails with ENOTFOUND when no address has the requested family', async () => {
    const v4Only = new OutboundGuard({ allowedHosts: [], resolver: async () => [{ address: '8.8.8.8', family: 4 }] });
    const { error } = await lookupOnce(v4Only, 'api.example.com', { family: 6 });
    expect(error).toMatchObject({ code: 'ENOTFOUND' });
  });

  it('refuses in both forms when any address is refused', async () => {
    const mixed = new OutboundGuard({
      allowedHosts: [],
      resolver: async () => [
        { address: '8.8.8.8', family: 4 },
        { address: '169.254.169.254', family: 4 },
      ],
    });
    for (const options of [{ all: true }, {}] as LookupOptions[]) {
      const { error } = await lookupOnce(mixed, 'metadata.example.com', options);
      expect(error).toBeInstanceOf(OutboundRequestRefused);
      expect((error as OutboundRequestRefused).reason).toContain('metadata.example.com resolves to 169.254.169.254');
    }
  });
});
