import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { PrismaService } from '../prisma.service';
import { invalidInput } from '../persistence.errors';
import { isUuid } from '../uuid';
import { isWebhookEventType, type WebhookEventType } from './webhook-event-types';

/**
 * Standard Webhooks' secret format: `whsec_` + base64 of the key bytes. The signer
 * (libs/conversation/src/tools/webhook-signature.ts) base64-decodes the part after `whsec_` and uses
 * those bytes as the HMAC key, accepting 24 to 64 of them. libs/persistence does not depend on
 * libs/conversation, so this generator is a local twin of its generateSigningSecret(): keep the two
 * producing the same format.
 */
const SECRET_PREFIX = 'whsec_';
const SECRET_BYTES = 32;

/** What listings show: never the secret. */
export interface WebhookSubscriptionRecord {
  id: string;
  url: string;
  events: WebhookEventType[];
  description: string | null;
  createdAt: Date;
}

/** Only the create call sees the secret. */
export interface CreatedWebhookSubscription extends WebhookSubscriptionRecord {
  secret: string;
}

export interface CreateWebhookSubscriptionInput {
  organizationId: string;
  url: string;
  events: WebhookEventType[];
  description?: string | null;
}

/** lastError of a delivery dropped because its subscription was deleted. */
export const SUBSCRIPTION_DELETED = 'subscription_deleted';

const PUBLIC_FIELDS = { id: true, url: true, events: true, description: true, createdAt: true } as const;

/** A fresh subscription secret: `whsec_` + base64 of 32 random bytes (as generateSigningSecret()). */
export function generateWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;
}

/**
 * An organization's webhook subscriptions. Deleting is soft: past deliveries keep pointing at the
 * subscription, and a deleted one gets no new deliveries (the outbox only fans out to live ones;
 * pending deliveries are failed). Another organization's id reads as missing.
 */
@Injectable()
export class WebhookSubscriptionRepository {
  constructor(private readonly prisma: PrismaService) {}

  async create(input: CreateWebhookSubscriptionInput): Promise<CreatedWebhookSubscription> {
    if (!isUuid(input.organizationId)) throw invalidInput(`Invalid organization id: ${input.organizationId}`);
    if (input.events.length === 0) throw invalidInput('A subscription needs at least one event type');
    const unknown = input.events.find((type) => !isWebhookEventType(type));
    if (unknown !== undefined) throw invalidInput(`Unknown webhook event type '${String(unknown)}'`);
    const secret = generateWebhookSecret();
    const row = await this.prisma.webhookSubscription.create({
      data: {
        organizationId: input.organizationId,
        url: input.url,
        events: [...new Set(input.events)],
        secret,
        description: input.description ?? null,
      },
      select: PUBLIC_FIELDS,
    });
    return { ...toRecord(row), secret };
  }

  /** Live subscriptions, oldest first (an organization has a handful, so no paging). */
  async list(organizationId: string): Promise<WebhookSubscriptionRecord[]> {
    if (!isUuid(organizationId)) return [];
    const rows = await this.prisma.webhookSubscription.findMany({
      where: { organizationId, deletedAt: null },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      select: PUBLIC_FIELDS,
    });
    return rows.map(toRecord);
  }

  async findById(organizationId: string, id: string): Promise<WebhookSubscriptionRecord | null> {
    if (!isUuid(organizationId) || !isUuid(id)) return null;
    const row = await this.prisma.webhookSubscription.findFirst({ where: { id, organizationId, deletedAt: null }, select: PUBLIC_FIELDS });
    return row ? toRecord(row) : null;
  }

  /**
   * False when there is no such live subscription in the organization. Its pending deliveries are
   * failed in the same transaction: nobody wants events sent to an endpoint they unsubscribed.
   */
  async delete(organizationId: string, id: string): Promise<boolean> {
    if (!isUuid(organizationId) || !isUuid(id)) return false;
    const now = new Date();
    return this.prisma.$transaction(async (tx) => {
      const { count } = await tx.webhookSubscription.updateMany({
        where: { id, organizationId, deletedAt: null },
        data: { deletedAt: now },
      });
      if (count === 0) return false;
      await tx.webhookDelivery.updateMany({
        where: { subscriptionId: id, status: 'pending' },
        data: { status: 'failed', failedAt: now, lastError: SUBSCRIPTION_DELETED, lockedUntil: null },
      });
      return true;
    });
  }
}

function toRecord(row: { id: string; url: string; events: string[]; description: string | null; createdAt: Date }): WebhookSubscriptionRecord {
  return { ...row, events: row.events.filter(isWebhookEventType) };
}
