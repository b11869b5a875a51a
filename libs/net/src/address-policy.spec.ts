import { OutboundAllowlistError } from './address-allowlist';
import { AddressPolicy, type RefusedAddressKind } from './address-policy';

const strict = new AddressPolicy([]);

function kindOf(policy: AddressPolicy, address: string): RefusedAddressKind | 'allowed' {
  const verdict = policy.judgeAddress(address);
  return verdict.allowed ? 'allowed' : verdict.kind;
}

describe('AddressPolicy without an allowlist', () => {
  it.each<[string, RefusedAddressKind]>([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['169.254.1.1', 'link-local'],
    ['100.64.0.1', 'shared'],
    ['100.127.255.254', 'shared'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.0.8', 'reserved'],
    ['192.0.2.1', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['198.51.100.1', 'reserved'],
    ['203.0.113.1', 'reserved'],
    ['192.88.99.1', 'reserved'],
    ['192.52.193.1', 'reserved'],
    ['192.175.48.1', 'reserved'],
  ])('refuses IPv4 %s as %s', (address, kind) => {
    expect(kindOf(strict, address)).toBe(kind);
  });

  it.each<[string, RefusedAddressKind]>([
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['fe80::1%eth0.100', 'link-local'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['fec0::1', 'private'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'reserved'],
    ['2001:2::1', 'reserved'],
    ['100::1', 'reserved'],
    ['5f00::1', 'reserved'],
    ['3fff::1', 'reserved'],
    ['4000::1', 'non-global'],
    // IPv4 embedded at a fixed place: judged by the IPv4.
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['64:ff9b::10.0.0.1', 'private'],
    // Tunnels and translations: refused outright.
    ['::127.0.0.1', 'ipv4-tunnel'],
    ['::8.8.8.8', 'ipv4-tunnel'],
    ['::ffff:0:7f00:1', 'ipv4-tunnel'],
    ['64:ff9b:1::1', 'ipv4-tunnel'],
    ['2002:7f00:1::1', 'ipv4-tunnel'],
    ['2002:808:808::1', 'ipv4-tunnel'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'ipv4-tunnel'],
  ])('refuses IPv6 %s as %s', (address, kind) => {
    expect(kindOf(strict, address)).toBe(kind);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '93.184.216.34',
    '11.0.0.1',
    '172.15.255.255',
    '172.32.0.1',
    '100.63.255.255',
    '100.128.0.1',
    '169.255.0.1',
    '2606:4700:4700::1111',
    '2001:4860:4860::8888',
    '[2001:4860:4860::8888]',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
  ])('allows public %s', (address) => {
    expect(strict.judgeAddress(address)).toEqual({ allowed: true, allowlisted: false });
  });

  it('says why, naming the setting that allows it', () => {
    expect(strict.judgeAddress('127.0.0.1')).toMatchObject({
      reason: '127.0.0.1 is a loopback address; add it to OUTBOUND_ALLOWED_HOSTS to allow it',
    });
    expect(strict.judgeAddress('169.254.169.254')).toMatchObject({ reason: expect.stringContaining('cloud metadata') });
    expect(strict.judgeAddress('::ffff:10.0.0.1')).toMatchObject({
      reason: '::ffff:10.0.0.1 is an IPv6 form of 10.0.0.1, a private address; add it to OUTBOUND_ALLOWED_HOSTS to allow it',
    });
  });

  it('throws for something that is not an IP address', () => {
    expect(() => strict.judgeAddress('example.com')).toThrow(TypeError);
    expect(() => strict.judgeAddress('127.1')).toThrow(TypeError);
  });
});

describe('AddressPolicy allowlist', () => {
  it('exempts a single IPv4 address, and only it', () => {
    const policy = new AddressPolicy(['127.0.0.1']);
    expect(policy.judgeAddress('127.0.0.1')).toEqual({ allowed: true, allowlisted: true });
    expect(kindOf(policy, '127.0.0.2')).toBe('loopback');
  });

  it('exempts the IPv6 forms of an allowlisted IPv4 address', () => {
    const policy = new AddressPolicy(['127.0.0.1']);
    expect(kindOf(policy, '::ffff:127.0.0.1')).toBe('allowed');
    expect(kindOf(policy, '64:ff9b::7f00:1')).toBe('allowed');
  });

  it('exempts an IPv4 CIDR range', () => {
    const policy = new AddressPolicy(['10.0.0.0/8']);
    expect(kindOf(policy, '10.200.0.1')).toBe('allowed');
    expect(kindOf(policy, '11.0.0.1')).toBe('allowed');
    expect(kindOf(policy, '192.168.0.1')).toBe('private');
  });

  it('exempts IPv6 addresses and ranges, bracketed or not', () => {
    const policy = new AddressPolicy(['::1', 'fd00::/8', '[fe80::1]']);
    expect(kindOf(policy, '::1')).toBe('allowed');
    expect(kindOf(policy, 'fd00::5')).toBe('allowed');
    expect(kindOf(policy, 'fe80::1')).toBe('allowed');
    expect(kindOf(policy, 'fc00::5')).toBe('private');
    expect(kindOf(policy, '127.0.0.1')).toBe('loopback');
  });

  it('matches host names case-insensitively and without a trailing dot', () => {
    const policy = new AddressPolicy(['VLLM.lan.', ' ollama ']);
    expect(policy.isHostAllowlisted('vllm.lan')).toBe(true);
    expect(policy.isHostAllowlisted('vllm.LAN.')).toBe(true);
    expect(policy.isHostAllowlisted('ollama')).toBe(true);
    expect(policy.isHostAllowlisted('other.lan')).toBe(false);
    // A name is not an address: it exempts only connections made to that name.
    expect(kindOf(policy, '127.0.0.1')).toBe('loopback');
  });

  it('skips blank entries', () => {
    expect(() => new AddressPolicy(['', '  '])).not.toThrow();
  });

  it.each([
    ['http://vllm.lan', 'not a URL'],
    ['vllm.lan:8000', 'ports are not supported'],
    ['*.lan', 'wildcards'],
    ['10.0.0.0/33', 'prefix length'],
    ['10.0.0.0/', 'prefix length'],
    ['10/8', 'not an IP address'],
    ['::1/129', 'prefix length'],
    ['127.1', 'four decimal numbers'],
    ['0x7f.0.0.1', 'four decimal numbers'],
    ['300.1.1.1', 'four decimal numbers'],
    ['foo bar', 'not a valid host name'],
    ['-bad.lan', 'not a valid host name'],
  ])('refuses the entry %s at construction (%s)', (entry, problem) => {
    const construct = () => new AddressPolicy(['ok.lan', entry]);
    expect(construct).toThrow(OutboundAllowlistError);
    expect(construct).toThrow(`Invalid OUTBOUND_ALLOWED_HOSTS entry "${entry}"`);
    expect(construct).toThrow(problem);
  });
});
