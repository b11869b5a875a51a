import { createHash } from 'node:crypto';

/**
 * Encryption keys for the secrets vault: parsing the configured key strings and naming keys by id.
 *
 * Every error here describes what was wrong with a key (empty, which alphabet, how many bytes it
 * decodes to) and NEVER echoes the key or any part of it: these messages end up in startup logs,
 * crash reports and CI output, and a half-leaked key is still a leaked key.
 */

/** AES-256 keys are 32 bytes. */
export const ENCRYPTION_KEY_BYTES = 32;

/** A key string that cannot be used. `message` never contains the key material. */
export class EncryptionKeyError extends Error {
  override readonly name = 'EncryptionKeyError';
}

const HEX = /^[0-9a-fA-F]+$/;
// One alphabet or the other, never mixed: a value mixing '+/' with '-_' is a corrupted paste, not a key.
const BASE64_STANDARD = /^[A-Za-z0-9+/]+={0,2}$/;
const BASE64_URL = /^[A-Za-z0-9\-_]+={0,2}$/;

/**
 * Parses a key written as base64 (standard or url-safe, padded or not) or hex; it must decode to
 * exactly 32 bytes. Surrounding whitespace is ignored (a key file or a secret store often adds a
 * trailing newline). `label` names the key in errors, e.g. 'SECRETS_ENCRYPTION_KEY'.
 *
 * Why strict decoding: Node's base64 decoder silently skips characters outside the alphabet, so a
 * truncated or mangled key could still "decode" and then seal values under a key nobody has.
 *
 * A 64-character all-hex string is read as hex (as base64 it would be 48 bytes, never a valid key);
 * anything else that is valid base64 of 32 bytes is read as base64.
 */
export function parseEncryptionKey(value: string, label = 'SECRETS_ENCRYPTION_KEY'): Buffer {
  const text = value.trim();
  if (text === '') throw new EncryptionKeyError(`${label} is empty; expected 32 bytes as base64 or hex`);

  const isHex = HEX.test(text);
  if (isHex && text.length === ENCRYPTION_KEY_BYTES * 2) return Buffer.from(text, 'hex');

  const base64Bytes = decodedBase64Length(text);
  if (base64Bytes === ENCRYPTION_KEY_BYTES) {
    return Buffer.from(text, BASE64_URL.test(text) ? 'base64url' : 'base64');
  }

  if (isHex) {
    throw new EncryptionKeyError(
      `${label} looks like hex but has ${text.length} hex digits (${Math.floor(text.length / 2)} bytes); ` +
        `expected exactly ${ENCRYPTION_KEY_BYTES * 2} hex digits (${ENCRYPTION_KEY_BYTES} bytes)`,
    );
  }
  if (base64Bytes !== undefined) {
    throw new EncryptionKeyError(
      `${label} is base64 of ${base64Bytes} bytes; expected exactly ${ENCRYPTION_KEY_BYTES} bytes ` +
        `(e.g. the output of \`openssl rand -base64 32\`)`,
    );
  }
  throw new EncryptionKeyError(
    `${label} is neither valid base64 (standard or url-safe) nor hex (${text.length} characters, ` +
      `bad characters, mixed alphabets or misplaced padding); expected 32 bytes, e.g. \`openssl rand -base64 32\``,
  );
}

/** Bytes that a strictly valid base64/base64url string decodes to; undefined when it is not one. */
function decodedBase64Length(text: string): number | undefined {
  if (!BASE64_STANDARD.test(text) && !BASE64_URL.test(text)) return undefined;
  const padding = text.length - text.replace(/=+$/, '').length;
  const body = text.length - padding;
  // Padded: the total is a multiple of 4. Unpadded: a remainder of 1 can never be produced.
  if (padding > 0 ? text.length % 4 !== 0 : body % 4 === 1) return undefined;
  return Math.floor((body * 3) / 4);
}

/** The standard way to write a key (key file, docs): padded standard base64. */
export function formatEncryptionKey(key: Buffer): string {
  return key.toString('base64');
}

/** Prefix hashed before the key: a key id is a hash used for nothing else (see keyId). */
const KEY_ID_DOMAIN = 'switchboard:secrets-key-id:v1\0';

/**
 * A short stable id for a key: the first 16 hex characters (64 bits) of
 * SHA-256('switchboard:secrets-key-id:v1\0' || key). It is stored beside every sealed value so the
 * right key is picked during and after a rotation, and it appears in logs and error messages.
 *
 * Why it reveals nothing useful: the key is 256 uniformly random bits, so inverting a (truncated)
 * SHA-256 or guessing the key from it is infeasible; the id only lets someone tell keys apart.
 * The domain prefix makes this hash differ from any other digest of the same key (a plain
 * `sha256(key)` fingerprint elsewhere, a KDF), so the id cannot be matched against, or stand in
 * for, another use of the key. 64 bits is plenty to tell a handful of keys apart; the key ring
 * still refuses two different keys that share an id.
 */
export function keyId(key: Buffer): string {
  requireKeyLength(key);
  return createHash('sha256').update(KEY_ID_DOMAIN, 'utf8').update(key).digest('hex').slice(0, 16);
}

/** Throws unless `key` is 32 bytes (a programming error: keys come from parseEncryptionKey or randomBytes). */
export function requireKeyLength(key: Buffer): void {
  if (!Buffer.isBuffer(key) || key.length !== ENCRYPTION_KEY_BYTES) {
    const length = Buffer.isBuffer(key) ? `${key.length} bytes` : typeof key;
    throw new EncryptionKeyError(`an encryption key must be a ${ENCRYPTION_KEY_BYTES}-byte Buffer, got ${length}`);
  }
}
