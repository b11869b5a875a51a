import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/**
 * The tests' own check of a webhook tool's signature, written independently of the server's code:
 * HMAC-SHA256 over `${webhook-timestamp}.${body}`, base64, sent as `webhook-signature: v1,<sig>`
 * (several space-separated signatures allowed).
 */
export function toolSignatureIsValid(secret: string, headers: IncomingHttpHeaders, bodyText: string): boolean {
  const timestamp = String(headers['webhook-timestamp']);
  const header = String(headers['webhook-signature']);
  const expected = createHmac('sha256', secret).update(`${timestamp}.${bodyText}`).digest('base64');
  return header.split(' ').some((candidate) => {
    const value = candidate.replace(/^v1,/, '');
    return value.length === expected.length && timingSafeEqual(Buffer.from(value), Buffer.from(expected));
  });
}
