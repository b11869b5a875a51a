/**
 * The events a webhook subscription can ask for. call.cost is emitted by the cost ledger (when a call
 * is priced, and again for each correction); usage.threshold when a month's spend crosses 80% / 100%
 * of the organization's budget; call.analyzed when a call's post-call analysis completes (or is re-run);
 * campaign.completed when an outbound campaign has no contact left to call (with its counts by outcome).
 */
export const WEBHOOK_EVENT_TYPES = [
  'call.started',
  'call.answered',
  'call.ended',
  'transcript.turn',
  'tool.invoked',
  'call.cost',
  'usage.threshold',
  'call.analyzed',
  'campaign.completed',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export function isWebhookEventType(value: unknown): value is WebhookEventType {
  return (WEBHOOK_EVENT_TYPES as readonly unknown[]).includes(value);
}
