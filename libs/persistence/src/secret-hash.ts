import { createHash } from 'node:crypto';

/**
 * sha256 of a bearer secret (API key, media-stream token), hex encoded. Only this hash is
 * stored: a leaked database dump does not leak usable credentials. A fast hash is fine here
 * because the secrets are long random strings, not human passwords.
 */
export function hashSecret(rawSecret: string): string {
  return createHash('sha256').update(rawSecret, 'utf8').digest('hex');
}

/** How many leading characters of an API key are stored for display ("sk_live_ab…"). */
export const API_KEY_DISPLAY_PREFIX_LENGTH = 8;

export function apiKeyDisplayPrefix(rawKey: string): string {
  return rawKey.slice(0, API_KEY_DISPLAY_PREFIX_LENGTH);
}
