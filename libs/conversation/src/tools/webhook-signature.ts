import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Signs the webhooks Switchboard sends (tool calls now, platform events later) so the receiver can
 * tell they came from us and were not replayed. Header names follow Standard Webhooks; the HMAC is
 * taken over `${timestamp}.${body}` (as our issue specifies), NOT Standard Webhooks'
 * `${id}.${timestamp}.${body}`, and the secret is used as its UTF-8 bytes (no `whsec_` base64
 * decoding). A receiver must therefore verify with this module (or the same few lines of HMAC),
 * not with a stock Standard Webhooks library.
 */

export const WEBHOOK_ID_HEADER = 'webhook-id';
export const WEBHOOK_TIMESTAMP_HEADER = 'webhook-timestamp';
export const WEBHOOK_SIGNATURE_HEADER = 'webhook-signature';

/** How far the timestamp may be from the receiver's clock (either way) before a delivery is refused. */
export const DEFAULT_WEBHOOK_TOLERANCE_S = 5 * 60;

const SIGNATURE_VERSION = 'v1';

export interface SignWebhookInput {
  secret: string;
  /** Unique per delivery, so a receiver can drop duplicates. */
  id: string;
  /** Unix time in whole seconds. */
  timestampS: number;
  /** The exact bytes that will be sent: sign after serialising, never re-serialise afterwards. */
  body: string | Uint8Array;
}

export interface WebhookSignatureHeaders {
  [WEBHOOK_ID_HEADER]: string;
  [WEBHOOK_TIMESTAMP_HEADER]: string;
  [WEBHOOK_SIGNATURE_HEADER]: string;
}

/** base64 HMAC-SHA256 of `${timestampS}.${body}`. */
export function computeWebhookSignature(secret: string, timestampS: number | string, body: string | Uint8Array): string {
  return createHmac('sha256', secret).update(`${timestampS}.`).update(body).digest('base64');
}

export function signWebhook(input: SignWebhookInput): WebhookSignatureHeaders {
  if (input.secret.length === 0) throw new Error('cannot sign a webhook with an empty secret');
  if (!Number.isSafeInteger(input.timestampS) || input.timestampS < 0) {
    throw new Error(`webhook timestamp must be whole unix seconds, got ${input.timestampS}`);
  }
  if (input.id.length === 0 || /[\s,]/.test(input.id)) throw new Error('webhook id must be non-empty, without spaces or commas');
  return {
    [WEBHOOK_ID_HEADER]: input.id,
    [WEBHOOK_TIMESTAMP_HEADER]: String(input.timestampS),
    [WEBHOOK_SIGNATURE_HEADER]: `${SIGNATURE_VERSION},${computeWebhookSignature(input.secret, input.timestampS, input.body)}`,
  };
}

/** Header values as node:http (IncomingHttpHeaders) or a plain record gives them; names in lower case. */
export type WebhookHeaderValues = Record<string, string | string[] | undefined>;

export interface VerifyWebhookInput {
  secret: string;
  headers: WebhookHeaderValues;
  /** The raw body as received (before any JSON parsing). */
  body: string | Uint8Array;
  /** The receiver's clock, unix seconds; defaults to now. */
  nowS?: number;
  toleranceS?: number;
}

export type WebhookVerification = { valid: true; id: string; timestampS: number } | { valid: false; reason: string };

function singleHeader(headers: WebhookHeaderValues, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Checks a delivery: all three headers present, timestamp within the tolerance window, and at
 * least one `v1,` signature (the header may list several, space-separated, e.g. during a secret
 * rotation) matching in constant time. Never throws on bad input: a reason is returned instead.
 */
export function verifyWebhookSignature(input: VerifyWebhookInput): WebhookVerification {
  const id = singleHeader(input.headers, WEBHOOK_ID_HEADER);
  const timestamp = singleHeader(input.headers, WEBHOOK_TIMESTAMP_HEADER);
  const signatures = singleHeader(input.headers, WEBHOOK_SIGNATURE_HEADER);
  if (id === undefined || timestamp === undefined || signatures === undefined) {
    return { valid: false, reason: `missing ${WEBHOOK_ID_HEADER}, ${WEBHOOK_TIMESTAMP_HEADER} or ${WEBHOOK_SIGNATURE_HEADER} header` };
  }
  if (!/^\d{1,15}$/.test(timestamp)) return { valid: false, reason: `${WEBHOOK_TIMESTAMP_HEADER} is not unix seconds` };
  const timestampS = Number(timestamp);
  const nowS = input.nowS ?? Math.floor(Date.now() / 1000);
  const toleranceS = input.toleranceS ?? DEFAULT_WEBHOOK_TOLERANCE_S;
  if (Math.abs(nowS - timestampS) > toleranceS) {
    return { valid: false, reason: `timestamp is ${nowS - timestampS} s from now (tolerance ${toleranceS} s)` };
  }
  const expected = Buffer.from(computeWebhookSignature(input.secret, timestamp, input.body), 'base64');
  for (const candidate of signatures.split(' ')) {
    const comma = candidate.indexOf(',');
    if (comma < 0 || candidate.slice(0, comma) !== SIGNATURE_VERSION) continue;
    const given = Buffer.from(candidate.slice(comma + 1), 'base64');
    // timingSafeEqual throws on a length mismatch; the length of a well-formed signature is public anyway.
    if (given.length === expected.length && timingSafeEqual(given, expected)) return { valid: true, id, timestampS };
  }
  return { valid: false, reason: 'no matching v1 signature' };
}
