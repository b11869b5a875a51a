import { invalidInput } from '../persistence.errors';
import { isUuid } from '../uuid';

/** Position after the last call of a page, in (createdAt desc, id desc) order. */
export interface CallCursor {
  createdAt: Date;
  id: string;
}

/**
 * Cursors are opaque to API clients (base64url JSON) so the ordering key can change later
 * without breaking them. createdAt is stored with millisecond precision, the same as a JS
 * Date, so the round trip is exact and keyset pagination neither skips nor repeats rows.
 */
export function encodeCallCursor(cursor: CallCursor): string {
  return Buffer.from(JSON.stringify({ c: cursor.createdAt.toISOString(), i: cursor.id }), 'utf8').toString('base64url');
}

export function decodeCallCursor(encoded: string): CallCursor {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8'));
  } catch {
    throw invalidInput('Invalid cursor: not a cursor returned by this API');
  }
  const { c, i } = (parsed ?? {}) as { c?: unknown; i?: unknown };
  const createdAt = typeof c === 'string' ? new Date(c) : new Date(Number.NaN);
  if (Number.isNaN(createdAt.getTime()) || typeof i !== 'string' || !isUuid(i)) {
    throw invalidInput('Invalid cursor: not a cursor returned by this API');
  }
  return { createdAt, id: i };
}
