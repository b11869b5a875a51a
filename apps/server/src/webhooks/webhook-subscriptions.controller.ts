import { BadRequestException, Body, Controller, Delete, Get, HttpCode, HttpStatus, NotFoundException, Param, Post, UseGuards } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { ApiKeyGuard, type ApiPrincipal } from '../auth/api-key.guard';
import { Principal } from '../auth/principal.decorator';
import { RequireScope } from '../auth/require-scope.decorator';
import { ZodValidationPipe } from '../common/zod-validation.pipe';
import { ApiErrors, ApiKeyAuthenticated } from '../openapi/api-schemas';
import { TenantOutbound } from '../outbound/outbound-guard.provider';
import {
  createWebhookSubscriptionBody,
  CreateWebhookSubscriptionBodyDto,
  CreatedWebhookSubscriptionDto,
  WebhookSubscriptionDto,
  WebhookSubscriptionListDto,
  webhookIdParam,
} from './webhook-requests.schema';
import { WebhooksService } from './webhooks.service';

/**
 * Webhook subscriptions of the caller's organization. The signing secret is in the create
 * response only (store it then); listings never show it. Writes need `admin`.
 */
@ApiTags('Webhooks')
@ApiKeyAuthenticated()
@Controller('v1/webhook-subscriptions')
@UseGuards(ApiKeyGuard)
export class WebhookSubscriptionsController {
  constructor(
    private readonly webhooks: WebhooksService,
    private readonly outbound: TenantOutbound,
  ) {}

  @Post()
  @RequireScope('admin')
  @ApiCreatedResponse({ type: CreatedWebhookSubscriptionDto })
  @ApiErrors(400, 403)
  async create(@Principal() principal: ApiPrincipal, @Body(new ZodValidationPipe(createWebhookSubscriptionBody)) body: CreateWebhookSubscriptionBodyDto) {
    // Refused now, with the reason, rather than failing every delivery later.
    const check = await this.outbound.guard.checkUrlResolved(body.url, 'http');
    if (!check.ok) {
      throw new BadRequestException({
        statusCode: 400,
        error: 'Bad Request',
        code: 'validation_failed',
        message: `url refused: ${check.reason}`,
        details: [{ path: 'url', message: `refused: ${check.reason}` }],
      });
    }
    return this.webhooks.subscribe({ organizationId: principal.organizationId, url: body.url, events: body.events, description: body.description });
  }

  @Get()
  @ApiOkResponse({ type: WebhookSubscriptionListDto, description: 'Live subscriptions, without their secrets.' })
  async list(@Principal() principal: ApiPrincipal) {
    return { data: await this.webhooks.subscriptionsOf(principal.organizationId) };
  }

  @Get(':id')
  @ApiOkResponse({ type: WebhookSubscriptionDto })
  @ApiErrors(404)
  async detail(@Principal() principal: ApiPrincipal, @Param('id', new ZodValidationPipe(webhookIdParam)) id: string) {
    const subscription = await this.webhooks.subscription(principal.organizationId, id);
    if (!subscription) throw subscriptionNotFound(id);
    return subscription;
  }

  /** Pending deliveries to it are dropped; past deliveries stay listed. */
  @Delete(':id')
  @RequireScope('admin')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiNoContentResponse({ description: 'Deleted; its pending deliveries are marked failed.' })
  @ApiErrors(403, 404)
  async delete(@Principal() principal: ApiPrincipal, @Param('id', new ZodValidationPipe(webhookIdParam)) id: string): Promise<void> {
    if (!(await this.webhooks.unsubscribe(principal.organizationId, id))) throw subscriptionNotFound(id);
  }
}

function subscriptionNotFound(id: string): NotFoundException {
  // Another organization's subscription is indistinguishable from a missing one.
  return new NotFoundException({ statusCode: 404, error: 'Not Found', code: 'webhook_subscription_not_found', message: `No webhook subscription ${id}.` });
}
