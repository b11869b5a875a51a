import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Signs the webhooks Switchboard sends (tool calls and platform events) exactly as the Standard
 * Webhooks spec (https://www.standardwebhooks.com) says, so a receiver can verify them with any
 * stock Standard Webhooks library (e.g. the `standardwebhooks` npm package) or a few lines of HMAC:
 *
 *   webhook-id:        unique per message (receivers drop duplicates by it)
 *   webhook-timestamp: unix seconds of the attempt
 *   webhook-signature: `v1,<base64 HMAC-SHA256(key, "${webhook-id}.${webhook-timestamp}.${body}")>`
 *                      (a space-separated list of such signatures is allowed, e.g. during a rotation)
 *
 * The secret is `whsec_` + base64 of the key, and the HMAC key is the base64-DECODED bytes after
 * `whsec_` (never the secret string's own bytes). Secrets in any other form are refused.
 */

export const WEBHOOK_ID_HEADER = 'webhook-id';
export const WEBHOOK_TIMESTAMP_HEADER = 'webhook-timestamp';
export const WEBHOOK_SIGNATURE_HEADER = 'webhook-signature';

/** How far the timestamp may be from the receiver's clock (either way) before a delivery is refused. */
export const DEFAULT_WEBHOOK_TOLERANCE_S = 5 * 60;

export const SIGNING_SECRET_PREFIX = 'whsec_';
/** Key sizes the spec recommends (24 to 64 random bytes); generated secrets use 32. */
export const MIN_SIGNING_KEY_BYTES = 24;
export const MAX_SIGNING_KEY_BYTES = 64;
const GENERATED_KEY_BYTES = 32;

const SIGNATURE_VERSION = 'v1';

/** The problem with a would-be secret, or undefined when it is valid. Never includes the value itself. */
function signingSecretProblem(secret: unknown): string | undefined {
  if (typeof secret !== 'string' || !secret.startsWith(SIGNING_SECRET_PREFIX)) return `it does not start with "${SIGNING_SECRET_PREFIX}"`;
  const encoded = secret.slice(SIGNING_SECRET_PREFIX.length);
  // Buffer's decoder skips characters it does not know; a canonical round trip proves the text is
  // standard, padded base64 and nothing else.
  const key = Buffer.from(encoded, 'base64');
  if (encoded.length === 0 || key.toString('base64') !== encoded) return `the part after "${SIGNING_SECRET_PREFIX}" is not valid (padded, standard) base64`;
  if (key.length < MIN_SIGNING_KEY_BYTES || key.length > MAX_SIGNING_KEY_BYTES) {
    return `its key is ${key.length} bytes, not ${MIN_SIGNING_KEY_BYTES} to ${MAX_SIGNING_KEY_BYTES}`;
  }
  return undefined;
}

/**
 * The HMAC key of a Standard Webhooks secret (`whsec_` + base64 of 24..64 bytes). Throws a message
 * that says what is wrong, never the secret.
 */
export function parseSigningSecret(secret: string): Buffer {
  const problem = signingSecretProblem(secret);
  if (problem !== undefined) {
    throw new Error(
      `webhook signing secret must be "${SIGNING_SECRET_PREFIX}" followed by base64 of ${MIN_SIGNING_KEY_BYTES} to ${MAX_SIGNING_KEY_BYTES} random bytes, but ${problem}`,
    );
  }
  return Buffer.from(secret.slice(SIGNING_SECRET_PREFIX.length), 'base64');
}

export function isStandardWebhooksSecret(value: unknown): value is string {
  return signingSecretProblem(value) === undefined;
}

/** A fresh secret: `whsec_` + base64 of 32 random bytes. */
export function generateSigningSecret(): string {
  return `${SIGNING_SECRET_PREFIX}${randomBytes(GENERATED_KEY_BYTES).toString('base64')}`;
}

export interface SignWebhookInput {
  /** `whsec_` + base64 of the key. */
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

/**
 * base64 HMAC-SHA256 of `${id}.${timestampS}.${body}`, keyed by the decoded secret (without the
 * `v1,` prefix). Throws on a secret that is not `whsec_` + base64 of 24..64 bytes.
 */
export function computeWebhookSignature(secret: string, id: string, timestampS: number | string, body: string | Uint8Array): string {
  return createHmac('sha256', parseSigningSecret(secret)).update(`${id}.${timestampS}.`, 'utf8').update(body).digest('base64');
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
    [WEBHOOK_SIGNATURE_HEADER]: `${SIGNATURE_VERSION},${computeWebhookSignature(input.secret, input.id, input.timestampS, input.body)}`,
  };
}

/** Header values as node:http (IncomingHttpHeaders) or a plain record gives them; names in lower case. */
export type WebhookHeaderValues = Record<string, string | string[] | undefined>;

export interface VerifyWebhookInput {
  /** `whsec_` + base64 of the key. */
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
 * rotation) matching in constant time. Never throws on bad input (a malformed secret included):
 * a reason is returned instead.
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
  let expected: Buffer;
  try {
    expected = Buffer.from(computeWebhookSignature(input.secret, id, timestamp, input.body), 'base64');
  } catch (error) {
    return { valid: false, reason: (error as Error).message };
  }
  for (const candidate of signatures.split(' ')) {
    const comma = candidate.indexOf(',');
    if (comma < 0 || candidate.slice(0, comma) !== SIGNATURE_VERSION) continue;
    const given = Buffer.from(candidate.slice(comma + 1), 'base64');
    // timingSafeEqual throws on a length mismatch; the length of a well-formed signature is public anyway.
    if (given.length === expected.length && timingSafeEqual(given, expected)) return { valid: true, id, timestampS };
  }
  return { valid: false, reason: 'no matching v1 signature' };
}
