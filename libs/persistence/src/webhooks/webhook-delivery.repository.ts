import { Injectable } from '@nestjs/common';
import { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../prisma.service';
import { invalidInput, PersistenceError } from '../persistence.errors';
import { isUuid } from '../uuid';
import { decodeCallCursor, encodeCallCursor } from '../repositories/call-cursor';
import type { JsonValue } from '../repositories/json';
import type { WebhookEventType } from './webhook-event-types';
import { WebhookOutbox } from './webhook-outbox';
import type {
  ClaimFairness,
  ClaimedWebhookDelivery,
  WebhookAttemptOutcome,
  WebhookBacklog,
  WebhookDeliveryDetail,
  WebhookDeliveryPage,
  WebhookDeliveryRecord,
  WebhookDeliveryStatus,
} from './webhook-deliveries';

export const WEBHOOK_DELIVERY_LIST_MAX_LIMIT = 200;
/** Largest batch one claim takes. */
export const WEBHOOK_CLAIM_MAX_LIMIT = 1_000;

export interface ListWebhookDeliveriesInput {
  organizationId: string;
  limit: number;
  /** Only valid together with the same filters as the page that returned it. */
  cursor?: string | null;
  filters?: { status?: WebhookDeliveryStatus; eventType?: WebhookEventType; subscriptionId?: string };
}

const DELIVERY_INCLUDE = { event: { select: { type: true, callId: true } } } as const;
type DeliveryRow = Prisma.WebhookDeliveryGetPayload<{ include: typeof DELIVERY_INCLUDE }>;

interface ClaimRow {
  id: string;
  event_id: string;
  organization_id: string;
  subscription_id: string;
  attempt_count: number;
  give_up_after: Date;
  type: string;
  payload: JsonValue;
  url: string;
  secret: string;
  subscription_deleted: boolean;
  created_at: Date;
}

/**
 * The outbox's queue side: the worker claims due deliveries and records each attempt; the API lists
 * them, shows their attempts and replays them. All reads are scoped to an organization.
 */
@Injectable()
export class WebhookDeliveryRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly outbox: WebhookOutbox,
  ) {}

  /**
   * Claims up to `limit` due deliveries for `leaseMs`. FOR UPDATE SKIP LOCKED makes concurrent
   * claimers (other workers, other processes) pass over rows another one is claiming instead of
   * waiting for them or taking them twice; the lease (locked_until) then keeps the row out of
   * every claim while its request is in flight, and simply runs out if that worker dies.
   *
   * With `fairness`, the oldest due deliveries are taken per subscription, at most
   * perSubscription minus what it already has in flight: a receiver that is down (every attempt
   * waiting out the timeout) or a tenant with a backlog cannot hold every slot while other
   * organizations' deliveries wait.
   */
  async claimDue(limit: number, leaseMs: number, fairness?: ClaimFairness): Promise<ClaimedWebhookDelivery[]> {
    if (!Number.isInteger(limit) || limit < 1 || limit > WEBHOOK_CLAIM_MAX_LIMIT) {
      throw invalidInput(`limit must be an integer from 1 to ${WEBHOOK_CLAIM_MAX_LIMIT}`);
    }
    if (!Number.isInteger(leaseMs) || leaseMs < 1) throw invalidInput('leaseMs must be a positive integer');
    const claimable = Prisma.sql`status = 'pending' AND next_attempt_at <= now() AND (locked_until IS NULL OR locked_until < now())`;
    const due = fairness ? fairDue(claimable, limit, fairness) : Prisma.sql`
        SELECT id FROM webhook_deliveries WHERE ${claimable}
        ORDER BY next_attempt_at
        LIMIT ${limit}
        FOR UPDATE SKIP LOCKED`;
    const rows = await this.prisma.$queryRaw<ClaimRow[]>(Prisma.sql`
      WITH due AS (${due}),
      claimed AS (
        UPDATE webhook_deliveries d
        SET locked_until = now() + make_interval(secs => ${leaseMs}::float8 / 1000)
        FROM due WHERE d.id = due.id
        RETURNING d.id, d.event_id, d.subscription_id, d.organization_id, d.attempt_count, d.give_up_after, d.next_attempt_at, d.created_at
      )
      SELECT c.id, c.event_id, c.organization_id, c.subscription_id, c.attempt_count, c.give_up_after, c.created_at,
             e.type, e.payload, s.url, s.secret, (s.deleted_at IS NOT NULL) AS subscription_deleted
      FROM claimed c
      JOIN webhook_events e ON e.id = c.event_id
      JOIN webhook_subscriptions s ON s.id = c.subscription_id
      ORDER BY c.next_attempt_at`);
    return rows.map((row) => ({
      deliveryId: row.id,
      eventId: row.event_id,
      organizationId: row.organization_id,
      subscriptionId: row.subscription_id,
      eventType: row.type,
      payload: row.payload,
      attemptNumber: row.attempt_count + 1,
      giveUpAfter: new Date(row.give_up_after),
      url: row.url,
      secret: row.secret,
      subscriptionDeleted: row.subscription_deleted,
      createdAt: new Date(row.created_at),
    }));
  }

  /**
   * Logs an attempt and moves the delivery on, in one transaction (the attempt log and the
   * delivery's state never disagree). Only applies to a delivery still pending at the attempt
   * number claimed: returns false (and writes nothing) when another worker got there first.
   */
  async recordAttempt(outcome: WebhookAttemptOutcome): Promise<boolean> {
    const at = outcome.startedAt;
    const next = outcome.next;
    const finishedAt = new Date(at.getTime() + Math.round(outcome.latencyMs));
    return this.prisma.$transaction(async (tx) => {
      const { count } = await tx.webhookDelivery.updateMany({
        where: { id: outcome.deliveryId, status: 'pending', attemptCount: outcome.attemptNumber - 1 },
        data: {
          status: next.status,
          attemptCount: outcome.attemptNumber,
          lastAttemptAt: at,
          lastStatusCode: outcome.statusCode,
          lastError: outcome.error,
          lockedUntil: null,
          ...(next.status === 'pending' && { nextAttemptAt: next.nextAttemptAt }),
          ...(next.status === 'delivered' && { deliveredAt: finishedAt }),
          ...(next.status === 'failed' && { failedAt: finishedAt }),
        },
      });
      if (count === 0) return false;
      await tx.webhookDeliveryAttempt.create({
        data: {
          deliveryId: outcome.deliveryId,
          attemptNumber: outcome.attemptNumber,
          startedAt: at,
          statusCode: outcome.statusCode,
          latencyMs: outcome.latencyMs,
          error: outcome.error,
          responseExcerpt: outcome.responseExcerpt,
        },
      });
      return true;
    });
  }

  /**
   * The outbox's backlog across every organization (for /metrics): deliveries due now and waiting
   * for a worker, deliveries waiting for a retry's time, and how long the oldest due one has waited.
   * Both counts read the partial index on pending deliveries.
   */
  async backlog(): Promise<WebhookBacklog> {
    const [row] = await this.prisma.$queryRaw<Array<{ due: bigint; scheduled: bigint; oldest_due_s: number | null }>>(Prisma.sql`
      SELECT count(*) FILTER (WHERE next_attempt_at <= now()) AS due,
             count(*) FILTER (WHERE next_attempt_at > now()) AS scheduled,
             extract(epoch FROM now() - min(next_attempt_at) FILTER (WHERE next_attempt_at <= now()))::float8 AS oldest_due_s
        FROM webhook_deliveries WHERE status = 'pending'`);
    return { due: Number(row?.due ?? 0), scheduled: Number(row?.scheduled ?? 0), oldestDueSeconds: row?.oldest_due_s ?? 0 };
  }

  /** Ends a delivery without an attempt (its subscription was deleted). */
  async abandon(deliveryId: string, reason: string): Promise<void> {
    await this.prisma.webhookDelivery.updateMany({
      where: { id: deliveryId, status: 'pending' },
      data: { status: 'failed', failedAt: new Date(), lastError: reason, lockedUntil: null },
    });
  }

  /** One page of the organization's deliveries, newest first (keyset on createdAt, id). */
  async list(input: ListWebhookDeliveriesInput): Promise<WebhookDeliveryPage> {
    const { organizationId, limit, filters = {} } = input;
    if (!Number.isInteger(limit) || limit < 1 || limit > WEBHOOK_DELIVERY_LIST_MAX_LIMIT) {
      throw invalidInput(`limit must be an integer from 1 to ${WEBHOOK_DELIVERY_LIST_MAX_LIMIT}`);
    }
    const after = input.cursor ? decodeCallCursor(input.cursor) : null;
    if (!isUuid(organizationId)) return { items: [], nextCursor: null };
    if (filters.subscriptionId !== undefined && !isUuid(filters.subscriptionId)) return { items: [], nextCursor: null };
    const rows = await this.prisma.webhookDelivery.findMany({
      where: {
        organizationId,
        ...(filters.status && { status: filters.status }),
        ...(filters.subscriptionId && { subscriptionId: filters.subscriptionId }),
        ...(filters.eventType && { event: { type: filters.eventType } }),
        ...(after && {
          OR: [{ createdAt: { lt: after.createdAt } }, { createdAt: after.createdAt, id: { lt: after.id } }],
        }),
      },
      include: DELIVERY_INCLUDE,
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: limit + 1,
    });
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return { items: page.map(toDeliveryRecord), nextCursor: rows.length > limit && last ? encodeCallCursor(last) : null };
  }

  /** The delivery with the body it sends and every attempt, or null (missing or another organization's). */
  async findDetail(organizationId: string, id: string): Promise<WebhookDeliveryDetail | null> {
    if (!isUuid(organizationId) || !isUuid(id)) return null;
    const row = await this.prisma.webhookDelivery.findFirst({
      where: { id, organizationId },
      include: {
        event: { select: { type: true, callId: true, payload: true } },
        attempts: { orderBy: { attemptNumber: 'asc' } },
      },
    });
    if (!row) return null;
    const { attempts, ...delivery } = row;
    return {
      ...toDeliveryRecord(delivery),
      payload: row.event.payload,
      attempts: attempts.map((attempt) => ({
        attemptNumber: attempt.attemptNumber,
        startedAt: attempt.startedAt,
        statusCode: attempt.statusCode,
        latencyMs: attempt.latencyMs,
        error: attempt.error,
        responseExcerpt: attempt.responseExcerpt,
      })),
    };
  }

  /**
   * Sends the event again as a NEW delivery (replayOfId = the original), with the same event, so
   * the same `webhook-id`: a receiver that already processed it can tell. Null when the delivery
   * is missing or another organization's; conflict when its subscription was deleted.
   */
  async replay(organizationId: string, id: string): Promise<WebhookDeliveryRecord | null> {
    if (!isUuid(organizationId) || !isUuid(id)) return null;
    const original = await this.prisma.webhookDelivery.findFirst({
      where: { id, organizationId },
      select: { eventId: true, subscriptionId: true, subscription: { select: { deletedAt: true } } },
    });
    if (!original) return null;
    if (original.subscription.deletedAt !== null) {
      throw new PersistenceError('conflict', `The subscription of delivery ${id} was deleted; nothing to replay to`);
    }
    const now = new Date();
    const created = await this.prisma.webhookDelivery.create({
      data: {
        organizationId,
        eventId: original.eventId,
        subscriptionId: original.subscriptionId,
        status: 'pending',
        nextAttemptAt: now,
        giveUpAfter: new Date(now.getTime() + this.outbox.giveUpAfterMs),
        replayOfId: id,
      },
      include: DELIVERY_INCLUDE,
    });
    this.outbox.committed(1);
    return toDeliveryRecord(created);
  }
}

function toDeliveryRecord(row: DeliveryRow): WebhookDeliveryRecord {
  return {
    id: row.id,
    eventId: row.eventId,
    // Only the outbox writes events, and only with known types.
    eventType: row.event.type as WebhookEventType,
    callId: row.event.callId,
    subscriptionId: row.subscriptionId,
    status: row.status as WebhookDeliveryStatus,
    attemptCount: row.attemptCount,
    nextAttemptAt: row.nextAttemptAt,
    lastAttemptAt: row.lastAttemptAt,
    lastStatusCode: row.lastStatusCode,
    lastError: row.lastError,
    deliveredAt: row.deliveredAt,
    failedAt: row.failedAt,
    giveUpAfter: row.giveUpAfter,
    replayOfId: row.replayOfId,
    createdAt: row.createdAt,
  };
}

/**
 * The ids of the deliveries a fair claim takes: for each subscription with due deliveries, its oldest
 * ones up to its remaining share (perSubscription minus in flight); then, per organization, the
 * oldest of those up to the organization's remaining share (an organization with many subscriptions
 * must not take every slot either); then the oldest of those overall.
 */
function fairDue(claimable: Prisma.Sql, limit: number, fairness: ClaimFairness): Prisma.Sql {
  const busyIds = [...fairness.inFlight.keys()];
  const busyCounts = busyIds.map((id) => fairness.inFlight.get(id) ?? 0);
  const byOrganization = fairness.inFlightByOrganization ?? new Map<string, number>();
  const busyOrganizations = [...byOrganization.keys()];
  const busyOrganizationCounts = busyOrganizations.map((id) => byOrganization.get(id) ?? 0);
  const perOrganization = fairness.perOrganization ?? limit;
  return Prisma.sql`
    SELECT ranked.id FROM (
      SELECT picked.id, picked.next_attempt_at,
             row_number() OVER (PARTITION BY subscription.organization_id ORDER BY picked.next_attempt_at) AS organization_rank,
             COALESCE(organization_busy.in_flight, 0) AS organization_in_flight
      FROM (
        SELECT DISTINCT subscription_id, organization_id FROM webhook_deliveries WHERE ${claimable}
      ) AS subscription
      LEFT JOIN unnest(${busyIds}::uuid[], ${busyCounts}::int[]) AS busy(subscription_id, in_flight)
        ON busy.subscription_id = subscription.subscription_id
      LEFT JOIN unnest(${busyOrganizations}::uuid[], ${busyOrganizationCounts}::int[]) AS organization_busy(organization_id, in_flight)
        ON organization_busy.organization_id = subscription.organization_id
      CROSS JOIN LATERAL (
        SELECT id, next_attempt_at FROM webhook_deliveries
        WHERE subscription_id = subscription.subscription_id AND ${claimable}
        ORDER BY next_attempt_at
        LIMIT GREATEST(0, ${fairness.perSubscription}::int - COALESCE(busy.in_flight, 0))
        FOR UPDATE SKIP LOCKED
      ) AS picked
    ) AS ranked
    WHERE ranked.organization_rank <= ${perOrganization}::int - ranked.organization_in_flight
    ORDER BY ranked.next_attempt_at
    LIMIT ${limit}`;
}
