/** The events a webhook subscription can ask for. call.cost is emitted by the cost ledger. */
export const WEBHOOK_EVENT_TYPES = [
  'call.started',
  'call.answered',
  'call.ended',
  'transcript.turn',
  'tool.invoked',
  'call.cost',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export function isWebhookEventType(value: unknown): value is WebhookEventType {
  return (WEBHOOK_EVENT_TYPES as readonly unknown[]).includes(value);
}
