import { randomBytes } from 'node:crypto';

const KEY_MARKER = 'sk_live_';
/** 32 random bytes: far beyond guessing, and sha256 (not a slow password hash) is then enough. */
const KEY_RANDOM_BYTES = 32;
/** The marker plus a few random characters, so listings can tell keys apart without revealing them. */
const DISPLAY_PREFIX_LENGTH = KEY_MARKER.length + 4;

export interface GeneratedApiKey {
  rawKey: string;
  prefix: string;
}

/** A new API key; the raw value is returned to the creator once and never stored. */
export function generateApiKey(): GeneratedApiKey {
  const rawKey = `${KEY_MARKER}${randomBytes(KEY_RANDOM_BYTES).toString('base64url')}`;
  return { rawKey, prefix: rawKey.slice(0, DISPLAY_PREFIX_LENGTH) };
}
