import { randomBytes } from 'node:crypto';

/** Twilio SIDs: a two-letter type prefix and 32 lowercase hex digits (CA call, MZ stream, AC account, CF conference). */
export type SidPrefix = 'CA' | 'MZ' | 'AC' | 'CF';

export function newSid(prefix: SidPrefix): string {
  return prefix + randomBytes(16).toString('hex');
}
