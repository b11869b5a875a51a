import type { JsonValue } from '../repositories/json';
import type { WebhookEventType } from './webhook-event-types';

export const WEBHOOK_DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];

/** A delivery as listings show it: its latest outcome, not every attempt. */
export interface WebhookDeliveryRecord {
  id: string;
  /** Sent as `webhook-id`; the same for every attempt and every replay of the event. */
  eventId: string;
  eventType: WebhookEventType;
  callId: string | null;
  subscriptionId: string;
  status: WebhookDeliveryStatus;
  attemptCount: number;
  nextAttemptAt: Date;
  lastAttemptAt: Date | null;
  lastStatusCode: number | null;
  lastError: string | null;
  deliveredAt: Date | null;
  failedAt: Date | null;
  giveUpAfter: Date;
  replayOfId: string | null;
  createdAt: Date;
}

export interface WebhookDeliveryAttemptRecord {
  attemptNumber: number;
  startedAt: Date;
  /** Null when no response came (timeout, refused connection). */
  statusCode: number | null;
  latencyMs: number;
  /** 'timeout' | 'connection_error: <code>' | 'http_<status>' | null on success. */
  error: string | null;
  /** The first 1 KiB of the response body. */
  responseExcerpt: string | null;
}

export interface WebhookDeliveryDetail extends WebhookDeliveryRecord {
  /** The exact JSON body sent. */
  payload: JsonValue;
  /** Oldest first. */
  attempts: WebhookDeliveryAttemptRecord[];
}

export interface WebhookDeliveryPage {
  items: WebhookDeliveryRecord[];
  nextCursor: string | null;
}

/** What the worker needs to make one attempt; secret included, so it never leaves the worker. */
export interface ClaimedWebhookDelivery {
  deliveryId: string;
  eventId: string;
  organizationId: string;
  subscriptionId: string;
  eventType: string;
  payload: JsonValue;
  /** attempt_count + 1 at claim time. */
  attemptNumber: number;
  giveUpAfter: Date;
  url: string;
  secret: string;
  /** The subscription was deleted after this delivery was enqueued: abandon it, send nothing. */
  subscriptionDeleted: boolean;
  /** When the delivery was enqueued (its event committed): delivery latency counts from here. */
  createdAt: Date;
}

/** The outbox's pending deliveries, deployment-wide. */
export interface WebhookBacklog {
  /** Due now, waiting for a worker. */
  due: number;
  /** Waiting for a retry's time. */
  scheduled: number;
  /** How long the oldest due delivery has been due (0 when none is). */
  oldestDueSeconds: number;
}

/**
 * Keeps one subscription from taking every delivery slot: at most `perSubscription` of its
 * deliveries in flight at once (`inFlight`: the claimer's own attempts still running, by subscription).
 */
export interface ClaimFairness {
  perSubscription: number;
  /** Attempts in flight by subscription id. */
  inFlight: ReadonlyMap<string, number>;
  /** At most this many in flight for one organization, whatever its number of subscriptions. */
  perOrganization?: number;
  /** Attempts in flight by organization id. */
  inFlightByOrganization?: ReadonlyMap<string, number>;
}

/** One attempt's outcome, and what becomes of the delivery (computed by the worker's schedule). */
export interface WebhookAttemptOutcome extends WebhookDeliveryAttemptRecord {
  deliveryId: string;
  next: { status: 'delivered' } | { status: 'pending'; nextAttemptAt: Date } | { status: 'failed' };
}
