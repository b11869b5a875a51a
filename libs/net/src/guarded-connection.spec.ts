import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { OutboundGuard } from './outbound-guard';

// A throwaway self-signed certificate for "secure.test" (test fixture only, trusted by nothing).
const KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgeLAzM7qMfu7AgCjX
4S0RTtkaBorcTUbAqi+bAwO5feuhRANCAAS6JGZNRSFEFPrPQpqK/Kr7qXUjrPoj
lYrULenZ6JGJCm9vfW278l7LUHqkRnr0QV17pPISGrX2jezIjG05xJZR
-----END PRIVATE KEY-----`;
const CERT = `-----BEGIN CERTIFICATE-----
MIIBmzCCAUGgAwIBAgIUPo4BofXmBbkbQ0ahqd1g4vXNUqcwCgYIKoZIzj0EAwIw
FjEUMBIGA1UEAwwLc2VjdXJlLnRlc3QwIBcNMjYxMTI0MjMwNjU1WhgPMjEyNjEw
MzEyMzA2NTVaMBYxFDASBgNVBAMMC3NlY3VyZS50ZXN0MFkwEwYHKoZIzj0CAQYI
KoZIzj0DAQcDQgAEuiRmTUUhRBT6z0Kaivyq+6l1I6z6I5WK1C3p2eiRiQpvb31t
u/Jey1B6pEZ69EFde6TyEhq19o3syIxtOcSWUaNrMGkwHQYDVR0OBBYEFJlh96uv
l1PL+l3JQh10+zGsy2/fMB8GA1UdIwQYMBaAFJlh96uvl1PL+l3JQh10+zGsy2/f
MA8GA1UdEwEB/wQFMAMBAf8wFgYDVR0RBA8wDYILc2VjdXJlLnRlc3QwCgYIKoZI
zj0EAwIDSAAwRQIhAL9SzLJvgAb4t9Jv4KQulH4e80gza0xzPKccozYXT3S2AiBQ
gJClRBelIkgE0l6FYHXrjy0B5qigVU1TihUz4gqdsA==
-----END CERTIFICATE-----`;

describe('guarded connector over TLS', () => {
  let server: Server;
  let port: number;
  const servernames: (string | undefined)[] = [];

  beforeAll(async () => {
    server = createServer({
      key: KEY,
      cert: CERT,
      // Called during the handshake with the SNI the client sent.
      SNICallback: (servername, callback) => {
        servernames.push(servername);
        callback(null);
      },
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('connects to the checked IP but keeps the host name for TLS (SNI)', async () => {
    const guard = new OutboundGuard({ allowedHosts: ['127.0.0.1'], resolver: async () => [{ address: '127.0.0.1', family: 4 }] });
    try {
      const error: unknown = await guard.fetch(`https://secure.test:${port}/`, { timeoutMs: 5_000 }).catch((thrown: unknown) => thrown);
      // The certificate is trusted by nothing, so verification fails; what matters is that the
      // handshake reached the server carrying the original name, not the IP connected to.
      expect((error as { cause?: { code?: string } }).cause?.code).toMatch(/CERT|SELF_SIGNED/);
      expect(servernames).toEqual(['secure.test']);
    } finally {
      await guard.close();
    }
  });
});
