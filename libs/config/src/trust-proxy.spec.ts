import { loadAppConfig } from './app-config';
import { parseTrustProxy } from './trust-proxy';

describe('TRUST_PROXY', () => {
  it('takes a hop count or a list of proxy addresses, ranges and presets', () => {
    expect(parseTrustProxy('1')).toBe(1);
    expect(parseTrustProxy('loopback')).toEqual(['loopback']);
    expect(parseTrustProxy('10.0.0.0/8, 192.168.1.7 ,loopback,::1')).toEqual(['10.0.0.0/8', '192.168.1.7', 'loopback', '::1']);
  });

  it('refuses trusting every hop (any client could pick its own address) and anything that is not an address', () => {
    for (const value of ['true', '0', '11', 'everyone', '10.0.0.0/99', '10.0.0.1,', 'loopback;rm']) expect(parseTrustProxy(value)).toBeUndefined();
    expect(() => loadAppConfig({ TRUST_PROXY: 'true' })).toThrow(/TRUST_PROXY/);
  });

  it('is off unless set', () => {
    expect(loadAppConfig({}).trustProxy).toBeUndefined();
    expect(loadAppConfig({ TRUST_PROXY: '127.0.0.1' }).trustProxy).toEqual(['127.0.0.1']);
  });
});
