import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { SecretKeyRing } from './key-ring';

/**
 * Sealing: AES-256-GCM with a fresh random 96-bit nonce per value, bound to one organization and one
 * purpose through the associated data. Stored as the columns key_id, nonce (12 bytes) and
 * ciphertext (encrypted bytes || 16-byte GCM tag).
 */

const ALGORITHM = 'aes-256-gcm';
/** 96 bits: GCM's native nonce size. Random nonces are safe far beyond any one key's use here (2^32 seals). */
export const NONCE_BYTES = 12;
/** Full-length tag, and required on open: accepting shorter tags would weaken authentication. */
export const TAG_BYTES = 16;

/** The purpose of most vault values; Twilio auth tokens use 'twilio-auth-token', and so on. */
export const DEFAULT_SECRET_PURPOSE = 'organization-secret';

/** A sealed value as written to the database. */
export interface SealedValue {
  keyId: string;
  nonce: Buffer;
  /** Encrypted bytes followed by the 16-byte GCM tag. */
  ciphertext: Buffer;
}

/** A sealed value as read back (the database driver may hand back Uint8Array rather than Buffer). */
export interface SealedValueInput {
  keyId: string;
  nonce: Uint8Array;
  ciphertext: Uint8Array;
}

export type SecretOpenFailure = 'unknown_key_id' | 'authentication_failed' | 'malformed';

/** A sealed value that could not be opened. The message says why; it never contains the value. */
export class SecretOpenError extends Error {
  override readonly name = 'SecretOpenError';
  constructor(
    readonly reason: SecretOpenFailure,
    readonly keyId: string,
    message: string,
  ) {
    super(message);
  }
}

const PURPOSE = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
// Lone UTF-16 surrogates cannot be encoded as UTF-8: they would come back as U+FFFD, not as sealed.
const LONE_SURROGATE = /\p{Surrogate}/u;

/**
 * The associated data: `switchboard:<purpose>:v1:<organizationId>`. Authenticated, not encrypted,
 * not stored: opening recomputes it, so a row copied into another organization, or a value sealed
 * for one purpose presented as another (a webhook secret as a Twilio token), fails authentication.
 * The purpose may not contain ':', so the string maps back to exactly one (purpose, organization).
 * 'v1' leaves room for a different format later without ambiguity.
 */
export function associatedData(organizationId: string, purpose: string = DEFAULT_SECRET_PURPOSE): Buffer {
  if (typeof organizationId !== 'string' || organizationId === '') {
    throw new TypeError('organizationId must be a non-empty string');
  }
  if (!PURPOSE.test(purpose)) {
    throw new TypeError(`purpose must be lowercase words joined by '-' (e.g. 'twilio-auth-token'), got '${purpose}'`);
  }
  return Buffer.from(`switchboard:${purpose}:v1:${organizationId}`, 'utf8');
}

/**
 * Seals `plaintext` for one organization and purpose under the ring's active key. Every call draws a
 * new random nonce, so sealing the same value twice gives unrelated ciphertexts (no equality leak,
 * and GCM's one hard rule, never reuse a nonce with a key, holds without any counter to persist).
 * The empty string is allowed here; refusing empty values is the API's decision.
 */
export function seal(ring: SecretKeyRing, plaintext: string, organizationId: string, purpose: string = DEFAULT_SECRET_PURPOSE): SealedValue {
  if (typeof plaintext !== 'string') throw new TypeError('plaintext must be a string');
  if (LONE_SURROGATE.test(plaintext)) throw new TypeError('plaintext contains a lone UTF-16 surrogate and would not round-trip');
  const aad = associatedData(organizationId, purpose);
  const keyId = ring.activeKeyId;
  const key = requiredKey(ring, keyId);
  const nonce = randomBytes(NONCE_BYTES);
  const data = Buffer.from(plaintext, 'utf8');
  try {
    const cipher = createCipheriv(ALGORITHM, key, nonce, { authTagLength: TAG_BYTES });
    cipher.setAAD(aad);
    const ciphertext = Buffer.concat([cipher.update(data), cipher.final(), cipher.getAuthTag()]);
    return { keyId, nonce, ciphertext };
  } finally {
    // Best effort: JS strings cannot be wiped, but the buffers we made can.
    data.fill(0);
    key.fill(0);
  }
}

/**
 * Opens a value sealed by `seal` for the same organization and purpose. Throws SecretOpenError:
 * 'unknown_key_id' when this server lacks the key, 'authentication_failed' for a wrong
 * organization, purpose or key, or a modified nonce/ciphertext/tag (GCM cannot tell these apart,
 * by design), 'malformed' when the stored bytes have impossible sizes.
 */
export function open(ring: SecretKeyRing, sealed: SealedValueInput, organizationId: string, purpose: string = DEFAULT_SECRET_PURPOSE): string {
  const aad = associatedData(organizationId, purpose);
  const { keyId } = sealed;
  if (sealed.nonce.length !== NONCE_BYTES) {
    throw new SecretOpenError('malformed', keyId, `malformed sealed value: the nonce is ${sealed.nonce.length} bytes, expected ${NONCE_BYTES}`);
  }
  if (sealed.ciphertext.length < TAG_BYTES) {
    throw new SecretOpenError(
      'malformed',
      keyId,
      `malformed sealed value: the ciphertext is ${sealed.ciphertext.length} bytes, shorter than its ${TAG_BYTES}-byte tag`,
    );
  }
  const key = ring.keyFor(keyId);
  if (key === undefined) {
    throw new SecretOpenError(
      'unknown_key_id',
      keyId,
      `unknown key id ${keyId}: the server does not have the key this value was sealed with ` +
        '(check SECRETS_ENCRYPTION_KEY / SECRETS_PREVIOUS_KEYS)',
    );
  }
  const ciphertext = Buffer.from(sealed.ciphertext.buffer, sealed.ciphertext.byteOffset, sealed.ciphertext.byteLength);
  const body = ciphertext.subarray(0, ciphertext.length - TAG_BYTES);
  const tag = ciphertext.subarray(ciphertext.length - TAG_BYTES);
  let data: Buffer | undefined;
  try {
    const decipher = createDecipheriv(ALGORITHM, key, sealed.nonce, { authTagLength: TAG_BYTES });
    decipher.setAAD(aad);
    decipher.setAuthTag(tag);
    // Nothing from update() is used unless final() verified the tag.
    data = Buffer.concat([decipher.update(body), decipher.final()]);
    return data.toString('utf8');
  } catch {
    throw new SecretOpenError('authentication_failed', keyId, 'authentication failed: wrong organization, wrong key or tampered value');
  } finally {
    data?.fill(0);
    key.fill(0);
  }
}

/** True when the value is not sealed with the active key: the rotate command should reseal it. */
export function needsReseal(ring: SecretKeyRing, sealed: Pick<SealedValueInput, 'keyId'>): boolean {
  return sealed.keyId !== ring.activeKeyId;
}

/**
 * Opens the value and seals it again under the active key (with a new nonce). Used by the rotate
 * command on values where needsReseal is true; throws SecretOpenError like `open`.
 */
export function reseal(ring: SecretKeyRing, sealed: SealedValueInput, organizationId: string, purpose: string = DEFAULT_SECRET_PURPOSE): SealedValue {
  return seal(ring, open(ring, sealed, organizationId, purpose), organizationId, purpose);
}

function requiredKey(ring: SecretKeyRing, id: string): Buffer {
  const key = ring.keyFor(id);
  if (key === undefined) throw new Error(`key ring has no key for its own active id ${id}`);
  return key;
}
