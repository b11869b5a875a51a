import { apiKeyDisplayPrefix, hashSecret } from './secret-hash';

describe('hashSecret', () => {
  it('is sha256 hex (known vector) and deterministic', () => {
    expect(hashSecret('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(hashSecret('sk_live_x')).toBe(hashSecret('sk_live_x'));
    expect(hashSecret('sk_live_x')).not.toBe(hashSecret('sk_live_y'));
  });

  it('shows only the first 8 characters of a key', () => {
    expect(apiKeyDisplayPrefix('sk_live_0123456789')).toBe('sk_live_');
  });
});
