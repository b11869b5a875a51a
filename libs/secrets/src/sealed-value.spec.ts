import { randomBytes, randomUUID } from 'node:crypto';
import { inspect } from 'node:util';
import { keyId } from './encryption-key';
import { SecretKeyRing } from './key-ring';
import { SecretOpenError, associatedData, needsReseal, open, reseal, seal } from './sealed-value';
import type { SealedValue, SealedValueInput } from './sealed-value';

const ORG = randomUUID();
const OTHER_ORG = randomUUID();
const SECRET = 'sk-proj-0123456789abcdefghijklmnop';

function openError(action: () => unknown): SecretOpenError {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(SecretOpenError);
    return error as SecretOpenError;
  }
  throw new Error('expected a SecretOpenError');
}

function flipByte(buffer: Buffer, index: number): Buffer {
  const copy = Buffer.from(buffer);
  copy[index] = (copy[index] ?? 0) ^ 0x01;
  return copy;
}

describe('seal / open', () => {
  const ring = new SecretKeyRing({ active: randomBytes(32) });

  it('round-trips for the same organization and purpose', () => {
    for (const value of [SECRET, 'ünïcödé 🔑 密钥 \u0000 tab\t', '', 'x'.repeat(10_000)]) {
      expect(open(ring, seal(ring, value, ORG), ORG)).toBe(value);
      expect(open(ring, seal(ring, value, ORG, 'twilio-auth-token'), ORG, 'twilio-auth-token')).toBe(value);
    }
  });

  it('stores the active key id, a 12-byte nonce and ciphertext || 16-byte tag', () => {
    const sealed = seal(ring, SECRET, ORG);
    expect(sealed.keyId).toBe(ring.activeKeyId);
    expect(sealed.nonce).toHaveLength(12);
    expect(sealed.ciphertext).toHaveLength(Buffer.byteLength(SECRET) + 16);
    expect(sealed.ciphertext.includes(Buffer.from(SECRET))).toBe(false);
  });

  it('draws a fresh nonce on every seal, so the same value never gives the same ciphertext', () => {
    const nonces = new Set<string>();
    const ciphertexts = new Set<string>();
    for (let i = 0; i < 1000; i++) {
      const sealed = seal(ring, SECRET, ORG);
      nonces.add(sealed.nonce.toString('hex'));
      ciphertexts.add(sealed.ciphertext.toString('hex'));
    }
    expect(nonces.size).toBe(1000);
    expect(ciphertexts.size).toBe(1000);
  });

  it('opens values read back as Uint8Array (as a database driver may return them)', () => {
    const sealed = seal(ring, SECRET, ORG);
    const fromDriver: SealedValueInput = { keyId: sealed.keyId, nonce: new Uint8Array(sealed.nonce), ciphertext: new Uint8Array(sealed.ciphertext) };
    expect(open(ring, fromDriver, ORG)).toBe(SECRET);
  });

  it('fails for another organization: a row copied across tenants cannot be opened', () => {
    const error = openError(() => open(ring, seal(ring, SECRET, ORG), OTHER_ORG));
    expect(error.reason).toBe('authentication_failed');
    expect(error.message).toBe('authentication failed: wrong organization, wrong key or tampered value');
    expect(error.keyId).toBe(ring.activeKeyId);
  });

  it('fails for another purpose', () => {
    const sealed = seal(ring, SECRET, ORG, 'organization-secret');
    expect(openError(() => open(ring, sealed, ORG, 'twilio-auth-token')).reason).toBe('authentication_failed');
    expect(openError(() => open(ring, seal(ring, SECRET, ORG, 'twilio-auth-token'), ORG)).reason).toBe('authentication_failed');
  });

  it('fails for a different key carrying the same id (wrong key)', () => {
    const sealed = seal(ring, SECRET, ORG);
    const otherRing = new SecretKeyRing({ active: randomBytes(32) });
    expect(openError(() => open(otherRing, { ...sealed, keyId: otherRing.activeKeyId }, ORG)).reason).toBe('authentication_failed');
  });

  describe('tampering', () => {
    const sealed: SealedValue = seal(ring, SECRET, ORG);
    const tagStart = sealed.ciphertext.length - 16;

    it.each([
      ['the first ciphertext byte', (): SealedValue => ({ ...sealed, ciphertext: flipByte(sealed.ciphertext, 0) })],
      ['the last ciphertext byte', (): SealedValue => ({ ...sealed, ciphertext: flipByte(sealed.ciphertext, tagStart - 1) })],
      ['a nonce byte', (): SealedValue => ({ ...sealed, nonce: flipByte(sealed.nonce, 5) })],
      ['the first tag byte', (): SealedValue => ({ ...sealed, ciphertext: flipByte(sealed.ciphertext, tagStart) })],
      ['the last tag byte', (): SealedValue => ({ ...sealed, ciphertext: flipByte(sealed.ciphertext, sealed.ciphertext.length - 1) })],
      ['a dropped ciphertext byte', (): SealedValue => ({ ...sealed, ciphertext: sealed.ciphertext.subarray(1) })],
      ['an appended byte', (): SealedValue => ({ ...sealed, ciphertext: Buffer.concat([sealed.ciphertext, Buffer.from([0])]) })],
    ])('is detected: %s', (_name, tamper) => {
      const error = openError(() => open(ring, tamper(), ORG));
      expect(error.reason).toBe('authentication_failed');
      expect(error.message).not.toContain(SECRET);
    });

    it('of sizes is reported as malformed', () => {
      expect(openError(() => open(ring, { ...sealed, nonce: sealed.nonce.subarray(0, 8) }, ORG)).message).toMatch(/nonce is 8 bytes, expected 12/);
      expect(openError(() => open(ring, { ...sealed, ciphertext: sealed.ciphertext.subarray(0, 15) }, ORG)).reason).toBe('malformed');
    });

    it('never reaches the caller as partial plaintext', () => {
      const error = openError(() => open(ring, { ...sealed, ciphertext: flipByte(sealed.ciphertext, tagStart) }, ORG));
      expect(inspect(error)).not.toContain(SECRET);
      expect(JSON.stringify(error)).not.toContain(SECRET);
    });
  });

  it('fails with a helpful message for an unknown key id', () => {
    const sealed = seal(new SecretKeyRing({ active: randomBytes(32) }), SECRET, ORG);
    const error = openError(() => open(ring, sealed, ORG));
    expect(error.reason).toBe('unknown_key_id');
    expect(error.message).toBe(
      `unknown key id ${sealed.keyId}: the server does not have the key this value was sealed with (check SECRETS_ENCRYPTION_KEY / SECRETS_PREVIOUS_KEYS)`,
    );
  });

  it('refuses an empty organization id, a malformed purpose and unencodable text', () => {
    expect(() => seal(ring, SECRET, '')).toThrow(/organizationId must be a non-empty string/);
    expect(() => open(ring, seal(ring, SECRET, ORG), '')).toThrow(TypeError);
    expect(() => seal(ring, SECRET, ORG, 'Twilio:token')).toThrow(/purpose must be lowercase words/);
    expect(() => seal(ring, SECRET, ORG, '')).toThrow(/purpose/);
    expect(() => seal(ring, 'abc\ud800def', ORG)).toThrow(/lone UTF-16 surrogate/);
  });
});

describe('associatedData', () => {
  it('is switchboard:<purpose>:v1:<organizationId>', () => {
    expect(associatedData(ORG).toString('utf8')).toBe(`switchboard:organization-secret:v1:${ORG}`);
    expect(associatedData(ORG, 'twilio-auth-token').toString('utf8')).toBe(`switchboard:twilio-auth-token:v1:${ORG}`);
  });
});

describe('rotation', () => {
  const keyA = randomBytes(32);
  const keyB = randomBytes(32);
  const ringA = new SecretKeyRing({ active: keyA });
  const ringBA = new SecretKeyRing({ active: keyB, previous: [keyA] });
  const ringB = new SecretKeyRing({ active: keyB });

  it('opens old values with a previous key, reseals them under the active key, then needs only the new key', () => {
    const sealedA = seal(ringA, SECRET, ORG, 'twilio-auth-token');
    expect(sealedA.keyId).toBe(keyId(keyA));

    expect(open(ringBA, sealedA, ORG, 'twilio-auth-token')).toBe(SECRET);
    expect(needsReseal(ringBA, sealedA)).toBe(true);

    const sealedB = reseal(ringBA, sealedA, ORG, 'twilio-auth-token');
    expect(sealedB.keyId).toBe(keyId(keyB));
    expect(needsReseal(ringBA, sealedB)).toBe(false);
    expect(open(ringB, sealedB, ORG, 'twilio-auth-token')).toBe(SECRET);

    // Without the previous key, the old value is unopenable, and says why.
    expect(openError(() => open(ringB, sealedA, ORG, 'twilio-auth-token')).reason).toBe('unknown_key_id');
  });

  it('keeps the binding to organization and purpose through a reseal', () => {
    const sealedA = seal(ringA, SECRET, ORG);
    expect(openError(() => reseal(ringBA, sealedA, OTHER_ORG)).reason).toBe('authentication_failed');
    const sealedB = reseal(ringBA, sealedA, ORG);
    expect(openError(() => open(ringB, sealedB, OTHER_ORG)).reason).toBe('authentication_failed');
  });

  it('reseals under a fresh nonce even when already on the active key', () => {
    const sealed = seal(ringB, SECRET, ORG);
    const again = reseal(ringB, sealed, ORG);
    expect(again.keyId).toBe(sealed.keyId);
    expect(again.nonce.equals(sealed.nonce)).toBe(false);
    expect(open(ringB, again, ORG)).toBe(SECRET);
  });
});
