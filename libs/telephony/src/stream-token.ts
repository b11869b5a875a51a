import { createHash, randomBytes } from 'node:crypto';
import { TelephonyError } from './telephony-error';

/** TwiML <Parameter> names; the media socket reads them back from start.customParameters. */
export const STREAM_PARAM_CALL_ID = 'callId';
export const STREAM_PARAM_TOKEN = 'streamToken';
/**
 * On a stream that takes a call back after a warm transfer nobody answered: the transfer's id. Ours
 * like the call id (only our TwiML sets it, and it counts only with the call's valid token).
 */
export const STREAM_PARAM_RESUME_TRANSFER = 'resumeTransfer';

/** 256 bits: unguessable for the token's short life with a wide margin over the 128-bit floor. */
export const STREAM_TOKEN_BYTES = 32;

const STREAM_TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export interface MintedStreamToken {
  /** Goes into the TwiML only; never stored or logged. */
  token: string;
  /** SHA-256 hex of the token: what the database keeps and consumes. */
  tokenHash: string;
  expiresAt: Date;
}

/**
 * A single-use credential binding a media socket to the call our voice webhook answered. This lib
 * only mints and hashes; the database consumes it atomically (single use, not expired).
 */
export function mintStreamToken(ttlMs: number, now: Date = new Date()): MintedStreamToken {
  if (!Number.isFinite(ttlMs) || ttlMs <= 0) {
    throw new TelephonyError('invalid_token_ttl', `stream token TTL must be a positive number of ms, got ${ttlMs}`);
  }
  const token = randomBytes(STREAM_TOKEN_BYTES).toString('base64url');
  return { token, tokenHash: hashStreamToken(token), expiresAt: new Date(now.getTime() + ttlMs) };
}

/** Hex SHA-256. A fast hash is enough: the token is random, so there is nothing to brute-force. */
export function hashStreamToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Cheap shape check so garbage from a socket is refused before any database lookup. */
export function isWellFormedStreamToken(value: unknown): value is string {
  return typeof value === 'string' && STREAM_TOKEN_PATTERN.test(value);
}
