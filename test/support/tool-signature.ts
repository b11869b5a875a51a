import type { IncomingHttpHeaders } from 'node:http';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';

/**
 * The tests' own check of a Switchboard signature (webhook tools and platform webhooks alike), made
 * with the official `standardwebhooks` package rather than the server's code, so a pass proves a
 * stock Standard Webhooks receiver accepts it: `webhook-signature: v1,<base64 HMAC-SHA256 of
 * "${webhook-id}.${webhook-timestamp}.${body}">` (several space-separated signatures allowed),
 * keyed by the base64-decoded part of the secret after `whsec_`, timestamp within 5 minutes of now.
 * A secret not in `whsec_<base64>` form is a mistake in the test itself: it throws.
 */
export function toolSignatureIsValid(secret: string, headers: IncomingHttpHeaders, bodyText: string): boolean {
  if (!/^whsec_[A-Za-z0-9+/]+={0,2}$/.test(secret)) throw new Error('toolSignatureIsValid: the secret is not a Standard Webhooks secret (whsec_ + base64)');
  const plain: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) plain[name] = Array.isArray(value) ? (value[0] ?? '') : value;
  }
  try {
    new Webhook(secret).verify(bodyText, plain, { jsonParse: false });
    return true;
  } catch (error) {
    if (error instanceof WebhookVerificationError) return false;
    throw error;
  }
}
