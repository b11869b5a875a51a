import { WEBHOOK_DELIVERY_STATUSES, WEBHOOK_EVENT_TYPES } from '@switchboard/persistence';
import { z } from 'zod';
import { createApiDto, isoDateTime, nullableDateTime, pageOf, uuid } from '../openapi/api-schemas';

export const createWebhookSubscriptionBody = z.strictObject({
  /** Where events are POSTed. http is allowed for local receivers; use https anywhere else. */
  url: z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' }).max(2048),
  events: z
    .array(z.enum(WEBHOOK_EVENT_TYPES))
    .min(1)
    .refine((events) => new Set(events).size === events.length, { message: 'Event types must not repeat.' }),
  description: z.string().trim().max(500).optional(),
});
export type CreateWebhookSubscriptionBody = z.infer<typeof createWebhookSubscriptionBody>;

/** GET /v1/webhook-deliveries. A cursor is only valid with the same filters as the page that returned it. */
export const listWebhookDeliveriesQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().min(1).max(512).optional(),
  status: z.enum(WEBHOOK_DELIVERY_STATUSES).optional(),
  eventType: z.enum(WEBHOOK_EVENT_TYPES).optional(),
  subscriptionId: z.guid().optional(),
});
export type ListWebhookDeliveriesQuery = z.infer<typeof listWebhookDeliveriesQuery>;

export const webhookIdParam = z.string().min(1).max(64);

/* Documentation DTOs and response shapes (OpenAPI; see openapi/api-schemas.ts). */
export class CreateWebhookSubscriptionBodyDto extends createApiDto(createWebhookSubscriptionBody) {}
export class ListWebhookDeliveriesQueryDto extends createApiDto(listWebhookDeliveriesQuery) {}

const subscriptionSchema = z.strictObject({
  id: uuid,
  url: z.string(),
  events: z.array(z.enum(WEBHOOK_EVENT_TYPES)),
  description: z.string().nullable(),
  createdAt: isoDateTime,
});
export class WebhookSubscriptionDto extends createApiDto(subscriptionSchema) {}
export class CreatedWebhookSubscriptionDto extends createApiDto(
  subscriptionSchema.extend({
    secret: z.string().describe('whsec_...: signs every delivery (HMAC-SHA256 over `webhook-timestamp.body`). Shown in this response only.'),
  }),
) {}
export class WebhookSubscriptionListDto extends createApiDto(z.strictObject({ data: z.array(subscriptionSchema) })) {}

const deliverySchema = z.strictObject({
  id: uuid,
  eventId: uuid.describe('Sent as `webhook-id`: the same on every attempt and replay of the event.'),
  eventType: z.enum(WEBHOOK_EVENT_TYPES),
  callId: uuid.nullable(),
  subscriptionId: uuid,
  status: z.enum(WEBHOOK_DELIVERY_STATUSES),
  attemptCount: z.number().int(),
  nextAttemptAt: isoDateTime,
  lastAttemptAt: nullableDateTime,
  lastStatusCode: z.number().int().nullable(),
  lastError: z.string().nullable(),
  deliveredAt: nullableDateTime,
  failedAt: nullableDateTime,
  giveUpAfter: isoDateTime.describe('Retries stop (status failed) after this time.'),
  replayOfId: uuid.nullable(),
  createdAt: isoDateTime,
});
const attemptSchema = z.strictObject({
  attemptNumber: z.number().int(),
  startedAt: isoDateTime,
  statusCode: z.number().int().nullable().describe('Null when no response came.'),
  latencyMs: z.number(),
  error: z.string().nullable().describe("'timeout' | 'connection_error: <code>' | 'http_<status>' | null"),
  responseExcerpt: z.string().nullable().describe('The first 1 KiB of the response body.'),
});
export class WebhookDeliveryDto extends createApiDto(deliverySchema) {}
export class WebhookDeliveryDetailDto extends createApiDto(
  deliverySchema.extend({ payload: z.unknown().describe('The exact JSON body sent.'), attempts: z.array(attemptSchema) }),
) {}
export class WebhookDeliveryPageDto extends createApiDto(pageOf(deliverySchema)) {}
