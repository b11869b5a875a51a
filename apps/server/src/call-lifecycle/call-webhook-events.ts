import { callEventData, type CallRecord, type Tx, type WebhookEventType, type WebhookOutbox } from '@switchboard/persistence';

/**
 * Writes one call.* webhook event (call.started, call.answered, call.ended) in the caller's
 * transaction, so the change and its event commit together. Returns the deliveries written.
 */
export function enqueueCallEvent(outbox: WebhookOutbox, tx: Tx, type: WebhookEventType, call: CallRecord): Promise<number> {
  // A call no organization owns (unknown number) has nobody to notify.
  if (call.organizationId === null) return Promise.resolve(0);
  return outbox.enqueue(tx, [{ organizationId: call.organizationId, type, callId: call.id, data: callEventData(call) }]);
}
