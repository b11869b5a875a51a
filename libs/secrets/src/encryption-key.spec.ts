import { randomBytes } from 'node:crypto';
import { EncryptionKeyError, formatEncryptionKey, keyId, parseEncryptionKey } from './encryption-key';

function parseError(value: string): EncryptionKeyError {
  try {
    parseEncryptionKey(value);
  } catch (error) {
    expect(error).toBeInstanceOf(EncryptionKeyError);
    return error as EncryptionKeyError;
  }
  throw new Error('expected parseEncryptionKey to throw');
}

describe('parseEncryptionKey', () => {
  const key = randomBytes(32);

  it.each([
    ['standard base64, padded', key.toString('base64')],
    ['standard base64, unpadded', key.toString('base64').replace(/=+$/, '')],
    ['url-safe base64, unpadded', key.toString('base64url')],
    ['url-safe base64, padded', `${key.toString('base64url')}=`],
    ['lowercase hex', key.toString('hex')],
    ['uppercase hex', key.toString('hex').toUpperCase()],
    ['with surrounding whitespace', `  ${key.toString('base64')}\n`],
  ])('accepts %s', (_name, value) => {
    expect(parseEncryptionKey(value).equals(key)).toBe(true);
  });

  it('reads base64 that uses both +/ characters and url-safe ones only when not mixed', () => {
    // A key whose base64 has '+' and '/', and the same key url-safe with '-' and '_'.
    let sample = randomBytes(32);
    while (!/[+/]/.test(sample.toString('base64'))) sample = randomBytes(32);
    expect(parseEncryptionKey(sample.toString('base64')).equals(sample)).toBe(true);
    expect(parseEncryptionKey(sample.toString('base64url')).equals(sample)).toBe(true);
  });

  it('formats keys so that they parse back', () => {
    expect(parseEncryptionKey(formatEncryptionKey(key)).equals(key)).toBe(true);
  });

  it.each([
    ['empty', '', /is empty/],
    ['blank', '   \n', /is empty/],
    ['base64 of 16 bytes', randomBytes(16).toString('base64'), /base64 of 16 bytes; expected exactly 32 bytes/],
    ['base64 of 33 bytes', randomBytes(33).toString('base64'), /base64 of 33 bytes/],
    ['hex of 31 bytes', randomBytes(31).toString('hex'), /hex but has 62 hex digits \(31 bytes\)/],
    ['hex of 33 bytes', randomBytes(33).toString('hex'), /hex but has 66 hex digits/],
    ['garbage characters', `${randomBytes(32).toString('base64').slice(0, 40)}!@#$`, /neither valid base64 .* nor hex/],
    ['mixed base64 alphabets', `+/-_${randomBytes(30).toString('base64url').slice(0, 39)}`, /neither valid base64/],
    ['padding in the middle', `${randomBytes(16).toString('base64')}${randomBytes(16).toString('base64')}`, /neither valid base64/],
    ['impossible unpadded length', 'Z'.repeat(41), /neither valid base64/],
    ['internal whitespace', `${key.toString('base64').slice(0, 20)} ${key.toString('base64').slice(20)}`, /neither valid base64/],
  ])('rejects %s with a clear message', (_name, value, expected) => {
    expect(parseError(value).message).toMatch(expected);
  });

  it('never puts the key material, or a large part of it, in the message', () => {
    const candidates = [
      randomBytes(16).toString('base64'),
      randomBytes(31).toString('hex'),
      `${randomBytes(32).toString('base64')}!`,
      `${randomBytes(32).toString('hex')}zz`,
      `+/-_${randomBytes(30).toString('base64url')}`,
    ];
    for (const value of candidates) {
      const { message } = parseError(value);
      // No 8-character run of the input appears in the message.
      for (let start = 0; start + 8 <= value.length; start++) {
        expect(message).not.toContain(value.slice(start, start + 8));
      }
    }
  });

  it('names the setting it was given', () => {
    expect(() => parseEncryptionKey('nope', 'SECRETS_PREVIOUS_KEYS entry 2')).toThrow(/^SECRETS_PREVIOUS_KEYS entry 2 /);
  });
});

describe('keyId', () => {
  it('is 16 hex characters, stable for a key, different between keys', () => {
    const key = randomBytes(32);
    expect(keyId(key)).toMatch(/^[0-9a-f]{16}$/);
    expect(keyId(Buffer.from(key))).toBe(keyId(key));
    expect(keyId(randomBytes(32))).not.toBe(keyId(key));
  });

  it('is a domain-separated hash, not a plain digest of the key', () => {
    const key = Buffer.alloc(32, 7);
    const { createHash } = jest.requireActual<typeof import('node:crypto')>('node:crypto');
    expect(keyId(key)).not.toBe(createHash('sha256').update(key).digest('hex').slice(0, 16));
    // Pinned: the id is stored beside every sealed value, so it must never change.
    expect(keyId(key)).toBe(createHash('sha256').update('switchboard:secrets-key-id:v1\0').update(key).digest('hex').slice(0, 16));
  });

  it('rejects keys that are not 32 bytes', () => {
    expect(() => keyId(randomBytes(16))).toThrow(/32-byte Buffer, got 16 bytes/);
  });
});
