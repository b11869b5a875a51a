import { Controller, Get, HttpCode, HttpStatus, NotFoundException, Param, Post, Query, Res, UseGuards } from '@nestjs/common';
import { ApiAcceptedResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { ApiKeyRateLimiter } from '../auth/api-key-rate-limiter';
import { ApiKeyGuard, type ApiPrincipal } from '../auth/api-key.guard';
import { Principal } from '../auth/principal.decorator';
import { RequireScope } from '../auth/require-scope.decorator';
import { ZodValidationPipe } from '../common/zod-validation.pipe';
import { ApiErrors, ApiKeyAuthenticated } from '../openapi/api-schemas';
import {
  listWebhookDeliveriesQuery,
  ListWebhookDeliveriesQueryDto,
  WebhookDeliveryDetailDto,
  WebhookDeliveryDto,
  WebhookDeliveryPageDto,
  webhookIdParam,
} from './webhook-requests.schema';
import { WebhooksService } from './webhooks.service';

/** The delivery log: every event sent to a subscription, its attempts, and replay. */
@ApiTags('Webhooks')
@ApiKeyAuthenticated()
@Controller('v1/webhook-deliveries')
@UseGuards(ApiKeyGuard)
export class WebhookDeliveriesController {
  constructor(
    private readonly webhooks: WebhooksService,
    private readonly rateLimiter: ApiKeyRateLimiter,
  ) {}

  /** Newest first; each with attemptCount and its last outcome (GET /:id has every attempt). */
  @Get()
  @ApiOkResponse({ type: WebhookDeliveryPageDto })
  @ApiErrors(400)
  async list(
    @Principal() principal: ApiPrincipal,
    @Query(new ZodValidationPipe(listWebhookDeliveriesQuery)) query: ListWebhookDeliveriesQueryDto,
  ) {
    const page = await this.webhooks.deliveryLog({
      organizationId: principal.organizationId,
      limit: query.limit,
      cursor: query.cursor,
      filters: { status: query.status, eventType: query.eventType, subscriptionId: query.subscriptionId },
    });
    return { data: page.items, nextCursor: page.nextCursor };
  }

  @Get(':id')
  @ApiOkResponse({ type: WebhookDeliveryDetailDto, description: 'The delivery with the body sent and every attempt (status, latency, error, response excerpt).' })
  @ApiErrors(404)
  async detail(@Principal() principal: ApiPrincipal, @Param('id', new ZodValidationPipe(webhookIdParam)) id: string) {
    const delivery = await this.webhooks.delivery(principal.organizationId, id);
    if (!delivery) throw deliveryNotFound(id);
    return delivery;
  }

  /**
   * Sends the event again as a new delivery (replayOfId = this one) with the same webhook-id, so a
   * receiver that already has it can tell. 202: it is queued, not yet sent.
   */
  @Post(':id/replay')
  @RequireScope('admin')
  @HttpCode(HttpStatus.ACCEPTED)
  @ApiAcceptedResponse({ type: WebhookDeliveryDto, description: 'The new, pending delivery.' })
  @ApiErrors(403, 404)
  async replay(
    @Principal() principal: ApiPrincipal,
    @Param('id', new ZodValidationPipe(webhookIdParam)) id: string,
    @Res({ passthrough: true }) response: Response,
  ) {
    await this.rateLimiter.consumeReplay(principal.organizationId, response);
    const replay = await this.webhooks.replay(principal.organizationId, id);
    if (!replay) throw deliveryNotFound(id);
    return replay;
  }
}

function deliveryNotFound(id: string): NotFoundException {
  return new NotFoundException({ statusCode: 404, error: 'Not Found', code: 'webhook_delivery_not_found', message: `No webhook delivery ${id}.` });
}
