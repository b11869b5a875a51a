import { signWebhook } from '@switchboard/secrets';

export const WEBHOOK_USER_AGENT = 'Switchboard-Webhooks/1';

export interface WebhookRequest {
  body: string;
  headers: Record<string, string>;
}

/**
 * The exact bytes and headers of one attempt, signed per Standard Webhooks with the same signer as
 * webhook tools: `webhook-signature: v1,<base64 HMAC-SHA256 of "${webhook-id}.${webhook-timestamp}.${body}">`,
 * keyed by the base64-decoded part of the subscription secret after `whsec_`, so receivers can verify
 * with any stock Standard Webhooks library. `webhook-id` is the EVENT id, identical on every retry and
 * replay, so receivers can drop duplicates; the timestamp is the attempt's, so a retry many
 * hours later still passes the receiver's freshness check.
 */
export function buildWebhookRequest(input: { eventId: string; payload: unknown; secret: string; now?: Date }): WebhookRequest {
  const body = JSON.stringify(input.payload);
  const timestampS = Math.floor((input.now ?? new Date()).getTime() / 1000);
  const signature = signWebhook({ secret: input.secret, id: input.eventId, timestampS, body });
  return {
    body,
    headers: { 'content-type': 'application/json', 'user-agent': WEBHOOK_USER_AGENT, ...signature },
  };
}
