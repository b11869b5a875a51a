import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Optional } from '@nestjs/common';
import { Prisma } from '../generated/prisma/client';
import type { InputJsonValue } from '../repositories/json';
import type { WebhookEventType } from './webhook-event-types';

export const WEBHOOK_OUTBOX_OPTIONS = Symbol('WEBHOOK_OUTBOX_OPTIONS');

export interface WebhookOutboxOptions {
  /** A delivery still failing this long after its event is marked failed (AppConfig.webhooks.giveUpAfterMs). */
  giveUpAfterMs: number;
}

export const DEFAULT_WEBHOOK_GIVE_UP_AFTER_MS = 24 * 60 * 60 * 1000;

export interface WebhookEventInput {
  organizationId: string;
  type: WebhookEventType;
  callId?: string | null;
  /** The event's `data`; it is sent to the customer's endpoint, so never put secrets in it. */
  data: InputJsonValue;
  /** When the change happened (default: now); the envelope's `timestamp`. */
  at?: Date;
}

/** The body every delivery sends (Standard Webhooks style envelope). */
export interface WebhookEnvelope {
  type: WebhookEventType;
  timestamp: string;
  data: InputJsonValue;
}

/**
 * Writes events to the outbox inside the caller's transaction, fanning out at once to one delivery
 * row per live subscription of the organization that asked for the event's type. So the change and
 * its deliveries commit (or roll back) together, and the delivery row is also the queue entry: no
 * second store, nothing enqueued-but-lost between two systems.
 *
 * When no subscription matches, nothing is written: most events of most organizations have no
 * subscriber, and an outbox of events nobody will ever receive would only grow. The consequence (by
 * design) is that a subscription only receives events that happen after it was created.
 *
 * One statement for the whole batch: the transcript path calls this for every batch of turns.
 * Returns how many delivery rows were written.
 */
export async function enqueueWebhookEvents(
  tx: Prisma.TransactionClient,
  events: readonly WebhookEventInput[],
  options: WebhookOutboxOptions,
): Promise<number> {
  if (events.length === 0) return 0;
  const organizationIds = new Set(events.map((event) => event.organizationId));
  if (organizationIds.size !== 1) throw new Error('enqueueWebhookEvents takes events of one organization at a time');
  const organizationId = events[0]!.organizationId;
  const now = new Date();
  const ids = events.map(() => randomUUID());
  const types = events.map((event) => event.type);
  const callIds = events.map((event) => event.callId ?? null);
  const payloads = events.map((event) => JSON.stringify(envelopeOf(event, now)));
  const giveUpAfter = new Date(now.getTime() + options.giveUpAfterMs).toISOString();
  // Data-modifying CTEs: the event rows exist (and are checked by the foreign key) by the end of
  // the statement, which is when the deliveries' foreign-key checks run.
  return tx.$executeRaw(Prisma.sql`
    WITH input AS (
      SELECT * FROM unnest(${ids}::uuid[], ${types}::text[], ${callIds}::uuid[], ${payloads}::jsonb[])
             AS i(id, type, call_id, payload)
    ),
    matched AS (
      SELECT i.id AS event_id, s.id AS subscription_id
      FROM input i
      JOIN webhook_subscriptions s
        ON s.organization_id = ${organizationId}::uuid AND s.deleted_at IS NULL AND i.type = ANY(s.events)
    ),
    written AS (
      INSERT INTO webhook_events (id, organization_id, type, call_id, payload, created_at)
      SELECT i.id, ${organizationId}::uuid, i.type, i.call_id, i.payload, ${now.toISOString()}::timestamptz
      FROM input i
      WHERE EXISTS (SELECT 1 FROM matched m WHERE m.event_id = i.id)
      RETURNING id
    )
    INSERT INTO webhook_deliveries (id, organization_id, event_id, subscription_id, status, next_attempt_at, give_up_after)
    SELECT gen_random_uuid(), ${organizationId}::uuid, w.id, m.subscription_id, 'pending', now(), ${giveUpAfter}::timestamptz
    FROM written w JOIN matched m ON m.event_id = w.id`);
}

/** enqueueWebhookEvents for one event. */
export function enqueueWebhookEvent(
  tx: Prisma.TransactionClient,
  event: WebhookEventInput,
  options: WebhookOutboxOptions,
): Promise<number> {
  return enqueueWebhookEvents(tx, [event], options);
}

function envelopeOf(event: WebhookEventInput, now: Date): WebhookEnvelope {
  return { type: event.type, timestamp: (event.at ?? now).toISOString(), data: event.data };
}

/**
 * The outbox as repositories use it: the configured give-up window, plus a nudge for the delivery
 * worker once a transaction that enqueued something has committed (so a delivery does not wait for
 * the next poll). The nudge is only an optimisation; the worker's poll finds everything anyway.
 */
@Injectable()
export class WebhookOutbox {
  private readonly options: WebhookOutboxOptions;
  private readonly listeners = new Set<() => void>();

  constructor(@Optional() @Inject(WEBHOOK_OUTBOX_OPTIONS) options?: WebhookOutboxOptions) {
    this.options = options ?? { giveUpAfterMs: DEFAULT_WEBHOOK_GIVE_UP_AFTER_MS };
  }

  get giveUpAfterMs(): number {
    return this.options.giveUpAfterMs;
  }

  enqueue(tx: Prisma.TransactionClient, events: readonly WebhookEventInput[]): Promise<number> {
    return enqueueWebhookEvents(tx, events, this.options);
  }

  /** Call after the transaction that enqueued `deliveries` rows has committed. */
  committed(deliveries: number): void {
    if (deliveries === 0) return;
    for (const listener of this.listeners) listener();
  }

  /** Returns the unsubscribe function. */
  onCommitted(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
