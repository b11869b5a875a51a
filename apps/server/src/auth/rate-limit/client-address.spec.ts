import { anonymousBucket } from './client-address';

describe('anonymousBucket', () => {
  it('keys IPv4 (also IPv4-mapped IPv6) by the address', () => {
    expect(anonymousBucket('203.0.113.7')).toBe('anon:203.0.113.7');
    expect(anonymousBucket('::ffff:203.0.113.7')).toBe('anon:203.0.113.7');
  });

  it('keys other IPv6 addresses by their /64', () => {
    expect(anonymousBucket('2001:db8:1:2:aaaa::1')).toBe('anon:2001:db8:1:2::/64');
    expect(anonymousBucket('2001:db8:1:2:ffff:ffff:ffff:ffff')).toBe('anon:2001:db8:1:2::/64');
    expect(anonymousBucket('2001:db8:1:3::1')).not.toBe(anonymousBucket('2001:db8:1:2::1'));
  });

  it('puts a missing or malformed address in one shared bucket', () => {
    expect(anonymousBucket(undefined)).toBe('anon:unknown');
    expect(anonymousBucket('not an address')).toBe('anon:unknown');
  });
});
