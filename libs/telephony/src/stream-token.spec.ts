import { createHash } from 'node:crypto';
import { hashStreamToken, isWellFormedStreamToken, mintStreamToken, STREAM_PARAM_CALL_ID, STREAM_PARAM_TOKEN } from './stream-token';
import { TelephonyError } from './telephony-error';

describe('stream tokens', () => {
  it('mints a url-safe token of at least 128 random bits, its SHA-256 and an expiry', () => {
    const now = new Date('2025-01-02T03:04:05.000Z');
    const minted = mintStreamToken(30_000, now);
    expect(minted.token).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(Buffer.from(minted.token, 'base64url').length * 8).toBeGreaterThanOrEqual(128);
    expect(minted.tokenHash).toBe(createHash('sha256').update(minted.token).digest('hex'));
    expect(minted.tokenHash).toMatch(/^[0-9a-f]{64}$/);
    expect(minted.expiresAt.toISOString()).toBe('2025-01-02T03:04:35.000Z');
  });

  it('never repeats a token', () => {
    const tokens = new Set(Array.from({ length: 1000 }, () => mintStreamToken(1000).token));
    expect(tokens.size).toBe(1000);
  });

  it('hashes the way minting does, so the webhook and the socket agree', () => {
    const minted = mintStreamToken(1000);
    expect(hashStreamToken(minted.token)).toBe(minted.tokenHash);
    expect(hashStreamToken(`${minted.token}x`)).not.toBe(minted.tokenHash);
  });

  it('refuses a TTL that is not a positive number', () => {
    for (const ttlMs of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => mintStreamToken(ttlMs)).toThrow(TelephonyError);
    }
  });

  it('tells well-formed tokens from garbage before any lookup', () => {
    expect(isWellFormedStreamToken(mintStreamToken(1000).token)).toBe(true);
    for (const value of ['', 'short', `${'a'.repeat(43)}=`, 'a'.repeat(44), 'a'.repeat(42) + '+', undefined, 42]) {
      expect(isWellFormedStreamToken(value)).toBe(false);
    }
  });

  it('names the TwiML parameters', () => {
    expect(STREAM_PARAM_CALL_ID).toBe('callId');
    expect(STREAM_PARAM_TOKEN).toBe('streamToken');
  });
});
