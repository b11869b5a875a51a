import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { ConfigModule, type AppConfig } from '@switchboard/config';
import { DatabaseModule } from '@switchboard/persistence';
import { AgentEngines } from './agents/agent-engines';
import { AgentsController } from './agents-api/agents.controller';
import { ApiKeysController } from './api-keys/api-keys.controller';
import { ThrottlerStorage, ThrottlerStorageService } from '@nestjs/throttler';
import { ApiKeyGuard } from './auth/api-key.guard';
import { ApiKeyRateLimiter } from './auth/api-key-rate-limiter';
import { BootstrapService } from './bootstrap/bootstrap.service';
import { CallsController } from './calls/calls.controller';
import { OutboundCallService } from './calls/outbound-call.service';
import { OutboundCallsController } from './calls/outbound-calls.controller';
import { OrganizationController } from './organization/organization.controller';
import { OrganizationsController } from './organization/organizations.controller';
import { OperatorKeyGuard } from './auth/operator-key.guard';
import { CallUsageRegistry } from './usage/call-usage-registry';
import { CostsController } from './costs/costs.controller';
import { PersistenceErrorFilter } from './common/persistence-error.filter';
import { HealthController } from './health/health.controller';
import { InferenceService } from './inference/inference.service';
import { TwilioRestClientFactory } from './telephony-control/twilio-rest-client.factory';
import { LoggingModule } from './logging/logging.module';
import { MediaStreamGateway } from './media/media-stream.gateway';
import { MediaStreamService } from './media/media-stream.service';
import { MediaUpgradeVerifier } from './media/media-upgrade.verifier';
import { PhoneNumbersController } from './phone-numbers/phone-numbers.controller';
import { InboundCallService } from './twilio/inbound-call.service';
import { TwilioSignatureGuard } from './twilio/twilio-signature.guard';
import { TwilioWebhooksController } from './twilio/twilio-webhooks.controller';
import { WebhookDeliveriesController } from './webhooks/webhook-deliveries.controller';
import { WebhookDeliveryWorker } from './webhooks/webhook-delivery.worker';
import { WebhookSubscriptionsController } from './webhooks/webhook-subscriptions.controller';
import { OutboundAnswerService } from './twilio/outbound-answer.service';
import { OutboundCallWebhooksController } from './twilio/outbound-call-webhooks.controller';

/** The all-in-one server: admin REST, Twilio webhooks and media streams in one process. */
@Module({})
export class AppModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        LoggingModule.forRoot(config),
        DatabaseModule.forRoot({
          databaseUrl: config.database.url,
          dataDir: config.database.dataDir,
          migrate: config.database.migrateOnStart,
          webhooks: { giveUpAfterMs: config.webhooks.giveUpAfterMs },
        }),
      ],
      controllers: [WebhookSubscriptionsController, WebhookDeliveriesController, HealthController, CallsController, AgentsController, PhoneNumbersController, ApiKeysController, TwilioWebhooksController,
        OutboundCallsController, OutboundCallWebhooksController, OrganizationController, OrganizationsController, CostsController],
      providers: [
        { provide: APP_FILTER, useClass: PersistenceErrorFilter },
        ApiKeyGuard,
        OperatorKeyGuard,
        CallUsageRegistry,
        ApiKeyRateLimiter,
        { provide: ThrottlerStorage, useClass: ThrottlerStorageService },
        TwilioSignatureGuard,
        InboundCallService,
        WebhookDeliveryWorker,
        OutboundCallService,
        OutboundAnswerService,
        MediaUpgradeVerifier,
        MediaStreamService,
        MediaStreamGateway,
        AgentEngines,
        BootstrapService,
        InferenceService,
        {
          provide: TwilioRestClientFactory,
          useFactory: () => new TwilioRestClientFactory({ accountSid: config.twilio.accountSid, authToken: config.twilio.authToken, apiBaseUrl: config.twilio.apiBaseUrl }),
        },
      ],
    };
  }
}
