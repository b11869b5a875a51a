import { AddressPolicy } from './address-policy';
import type { HostResolver } from './host-resolution';
import { checkOutboundUrl, checkOutboundUrlResolved } from './outbound-url-rule';

function reasonOf(url: string, kind: 'http' | 'ws' = 'http', policy?: AddressPolicy): string | undefined {
  const check = checkOutboundUrl(url, { kind, policy });
  return check.ok ? undefined : check.reason;
}

describe('checkOutboundUrl', () => {
  it.each([
    ['https://api.example.com/v1', 'http'],
    ['http://api.example.com:8080/hook?x=1', 'http'],
    ['wss://realtime.example.com/v1/realtime', 'ws'],
    ['ws://realtime.example.com/', 'ws'],
    ['http://93.184.216.34/', 'http'],
    ['https://[2606:4700:4700::1111]/', 'http'],
  ] as const)('accepts %s (%s)', (url, kind) => {
    expect(checkOutboundUrl(url, { kind })).toEqual({ ok: true });
  });

  it.each([
    ['ftp://example.com/', 'http', 'only http: and https: URLs are allowed here, not ftp:'],
    ['ws://example.com/', 'http', 'only http: and https: URLs are allowed here, not ws:'],
    ['https://example.com/', 'ws', 'only ws: and wss: URLs are allowed here, not https:'],
    ['file:///etc/passwd', 'http', 'not file:'],
    ['example.com/hook', 'http', 'not a valid absolute URL'],
  ] as const)('refuses %s for %s', (url, kind, reason) => {
    expect(reasonOf(url, kind)).toContain(reason);
  });

  it.each(['https://user:pass@example.com/', 'https://user@example.com/', 'https://:pass@example.com/'])('refuses credentials in %s', (url) => {
    expect(reasonOf(url)).toBe('the URL contains credentials (user:password@); send them in a header instead');
  });

  it.each(['http://localhost:3000/', 'http://LOCALHOST./', 'http://api.localhost/', 'ws://localhost/'])('refuses the loopback name in %s', (url) => {
    expect(reasonOf(url, url.startsWith('ws') ? 'ws' : 'http')).toMatch(/localhost is a loopback host name; add it to OUTBOUND_ALLOWED_HOSTS/);
  });

  it('allows localhost when it is allowlisted', () => {
    expect(reasonOf('http://localhost:11434/v1', 'http', new AddressPolicy(['localhost']))).toBeUndefined();
  });

  it.each([
    ['http://127.0.0.1/', '127.0.0.1 is a loopback address; add it to OUTBOUND_ALLOWED_HOSTS to allow it'],
    ['http://10.0.0.1/', '10.0.0.1 is a private address'],
    ['http://169.254.169.254/latest/meta-data/', '169.254.169.254 is a link-local address (the cloud metadata service)'],
    ['http://[::1]/', '::1 is a loopback address'],
    ['http://[::ffff:127.0.0.1]/', '::ffff:7f00:1 is an IPv6 form of 127.0.0.1, a loopback address'],
    // Odd IPv4 spellings: the WHATWG parser turns each into a dotted quad before it is judged.
    ['http://2130706433/', '127.0.0.1 is a loopback address'],
    ['http://0x7f.1/', '127.0.0.1 is a loopback address'],
    ['http://127.1/', '127.0.0.1 is a loopback address'],
    ['http://0177.0.0.1/', '127.0.0.1 is a loopback address'],
    ['http://0/', '0.0.0.0 is an unspecified address'],
    ['http://[::]/', ':: is the unspecified address'],
  ])('refuses %s', (url, reason) => {
    expect(reasonOf(url)).toContain(reason);
  });

  it('refuses an IP-literal ws URL (Node never calls lookup for those)', () => {
    expect(reasonOf('ws://127.0.0.1:1/x', 'ws')).toContain('127.0.0.1 is a loopback address');
  });

  it('allows allowlisted addresses and ranges', () => {
    const policy = new AddressPolicy(['127.0.0.1', '10.0.0.0/8', '::1']);
    expect(reasonOf('http://127.0.0.1:8000/v1', 'http', policy)).toBeUndefined();
    expect(reasonOf('http://10.20.30.40/', 'http', policy)).toBeUndefined();
    expect(reasonOf('http://[::1]:8000/', 'http', policy)).toBeUndefined();
    expect(reasonOf('http://192.168.0.1/', 'http', policy)).toContain('private');
  });
});

describe('checkOutboundUrlResolved', () => {
  const answering =
    (...addresses: string[]): HostResolver =>
    async () =>
      addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

  it('refuses a name when any of its addresses is refused', async () => {
    const check = await checkOutboundUrlResolved('https://api.example.com/', { kind: 'http', resolver: answering('8.8.8.8', '10.0.0.1') });
    expect(check).toEqual({
      ok: false,
      reason: 'api.example.com resolves to 10.0.0.1, a private address; add api.example.com to OUTBOUND_ALLOWED_HOSTS to allow it',
    });
  });

  it('accepts a name whose addresses are all public', async () => {
    const check = await checkOutboundUrlResolved('wss://rt.example.com/', { kind: 'ws', resolver: answering('8.8.8.8', '2606:4700::1') });
    expect(check).toEqual({ ok: true });
  });

  it('accepts a name whose addresses are allowlisted', async () => {
    const policy = new AddressPolicy(['10.0.0.0/8']);
    const check = await checkOutboundUrlResolved('http://vllm.lan/', { kind: 'http', policy, resolver: answering('10.0.0.7') });
    expect(check).toEqual({ ok: true });
  });

  it('does not resolve an allowlisted name or an IP literal', async () => {
    const resolver = jest.fn(answering('127.0.0.1'));
    const policy = new AddressPolicy(['vllm.lan']);
    await expect(checkOutboundUrlResolved('http://VLLM.lan./v1', { kind: 'http', policy, resolver })).resolves.toEqual({ ok: true });
    await expect(checkOutboundUrlResolved('http://8.8.8.8/', { kind: 'http', resolver })).resolves.toEqual({ ok: true });
    expect(resolver).not.toHaveBeenCalled();
  });

  it('still applies the synchronous rule first', async () => {
    const check = await checkOutboundUrlResolved('http://127.0.0.1/', { kind: 'http', resolver: answering('8.8.8.8') });
    expect(check).toMatchObject({ ok: false, reason: expect.stringContaining('loopback') });
  });

  it('passes a name that does not resolve, with a warning', async () => {
    const resolver: HostResolver = () => Promise.reject(Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' }));
    const check = await checkOutboundUrlResolved('https://not-yet.example.com/', { kind: 'http', resolver });
    expect(check).toEqual({ ok: true, warning: expect.stringContaining('not-yet.example.com could not be resolved now (ENOTFOUND)') });
  });

  it('passes, with a warning, a name whose resolution outlasts the timeout', async () => {
    const resolver: HostResolver = () => new Promise(() => undefined);
    const started = Date.now();
    const check = await checkOutboundUrlResolved('https://slow.example.com/', { kind: 'http', resolver, resolveTimeoutMs: 50 });
    expect(check).toEqual({ ok: true, warning: expect.stringContaining('OUTBOUND_RESOLVE_TIMEOUT') });
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('treats an empty answer as not resolved', async () => {
    const check = await checkOutboundUrlResolved('https://empty.example.com/', { kind: 'http', resolver: answering() });
    expect(check).toEqual({ ok: true, warning: expect.stringContaining('ENOTFOUND') });
  });
});
