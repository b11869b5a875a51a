import { DynamicModule, Module } from '@nestjs/common';
import { MetricsController } from './metrics/metrics.controller';
import { ClusterLink } from './cluster/cluster-link';
import { CallRecordBatching } from './call-runtime/records/record-batching/call-record-batching';
import { MetricsRegistry } from './metrics/metrics.registry';
import type { DestinationStream } from 'pino';
import { APP_FILTER } from '@nestjs/core';
import { ConfigModule, type AppConfig } from '@switchboard/config';
import { DatabaseModule } from '@switchboard/persistence';
import { AgentEngines } from './agent-engines/agent-engines';
import { CallAnalysisController } from './analysis/call-analysis.controller';
import { CallAnalysisRerunService } from './analysis/call-analysis-rerun.service';
import { CallAnalysisRunner } from './analysis/call-analysis.runner';
import { CallAnalysisWorker } from './analysis/call-analysis.worker';
import { CampaignCallPlacer } from './campaigns/campaign-call-placer';
import { CampaignDialer } from './campaigns/campaign-dialer';
import { CampaignOutcomes } from './campaigns/campaign-outcomes.service';
import { CampaignsController } from './campaigns/campaigns.controller';
import { CampaignsService } from './campaigns/campaigns.service';
import { Clock } from './common/clock';
import { CallRecordingService } from './recordings/call-recording.service';
import { CallRecordingsController } from './recordings/call-recordings.controller';
import { RecordingLinkSigner } from './recordings/recording-link-signer';
import { RecordingLinksController } from './recordings/recording-links.controller';
import { RecordingRetentionSweeper } from './recordings/recording-retention.sweeper';
import { RecordingStores } from './recordings/recording-stores';
import { AgentsController } from './agents-api/agents.controller';
import { AgentsService } from './agents-api/agents.service';
import { AgentReadinessService } from './agents-api/agent-readiness';
import { ApiKeysController } from './api-keys/api-keys.controller';
import { ApiKeysService } from './api-keys/api-keys.service';
import { ApiKeyGuard } from './auth/api-key.guard';
import { ApiKeyRateLimiter } from './auth/api-key-rate-limiter';
import { rateLimitStoreProvider } from './auth/rate-limit/rate-limit-store.provider';
import { BootstrapService } from './bootstrap/bootstrap.service';
import { FirstRunController } from './console/first-run.controller';
import { FirstRunSignInService } from './console/first-run-sign-in.service';
import { LiveCallFeedService } from './calls/live-call-feed.service';
import { liveFeedLeaseStoreProvider } from './calls/live-feed-leases/live-feed-lease-store';
import { CallsController } from './calls/calls.controller';
import { CallRecordsService } from './calls/call-records.service';
import { OutboundCallService } from './calls/outbound-call.service';
import { OutboundCallsController } from './calls/outbound-calls.controller';
import { OrganizationController } from './organization/organization.controller';
import { OrganizationSettingsService } from './organization/organization-settings.service';
import { OrganizationsController } from './organization/operator-organizations.controller';
import { OperatorOrganizationsService } from './organization/operator-organizations.service';
import { OperatorKeyGuard } from './auth/operator-key.guard';
import { CallUsageRegistry } from './billing/usage-meters/call-usage-registry';
import { CostsController } from './billing/costs-api/costs.controller';
import { CostsService } from './billing/costs-api/costs.service';
import { PersistenceErrorFilter } from './common/persistence-error.filter';
import { HealthController } from './health/health.controller';
import { DatabaseReadiness } from './health/database-readiness.service';
import { InferenceCapacityService } from './inference/capacity/inference-capacity.service';
import { InferenceService } from './inference/inference.service';
import { TwilioRestClientFactory } from './twilio/call-control/twilio-rest-client.factory';
import { LoggingModule } from './logging/logging.module';
import { DrainCoordinator } from './server-drain/drain-coordinator';
import { KeepAliveOnShutdown } from './server-drain/keep-alive-on-shutdown';
import { CallMetrics } from './metrics/call-metrics';
import { LiveCallMetrics } from './metrics/live-call-metrics';
import { EngineErrorMetrics } from './metrics/engine-error-metrics';
import { TracingModule } from './tracing/tracing.module';
import { WebhookMetrics } from './metrics/webhook-metrics';
import { CapacityMetrics } from './metrics/capacity-metrics';
import { InferenceMetrics } from './metrics/inference-metrics';
import { DatabaseMetrics } from './metrics/database-metrics';
import { ServerDrain } from './server-drain/server-drain';
import { MediaStreamGateway } from './twilio/media-stream/media-stream.gateway';
import { WebCallGateway } from './web-calls/web-call.gateway';
import { WebCallService } from './web-calls/web-call.service';
import { AgentTestRunner } from './agent-tests/agent-test-runner';
import { AgentTestService } from './agent-tests/agent-test.service';
import { AgentTestsController } from './agent-tests/agent-tests.controller';
import { WebCallsController } from './web-calls/web-calls.controller';
import { MediaStreamService } from './twilio/media-stream/media-stream.service';
import { CallRuntimes } from './call-runtime/call-runtimes.service';
import { LiveCalls } from './call-runtime/live-calls';
import { MediaUpgradeVerifier } from './twilio/media-stream/media-upgrade.verifier';
import { PhoneNumbersController } from './phone-numbers/phone-numbers.controller';
import { PhoneNumbersService } from './phone-numbers/phone-numbers.service';
import { InboundCallService } from './twilio/webhooks/inbound-call.service';
import { TwilioSignatureGuard } from './twilio/webhooks/twilio-signature.guard';
import { TwilioWebhooksController } from './twilio/webhooks/twilio-webhooks.controller';
import { CallCallbacksService } from './twilio/webhooks/call-callbacks.service';
import { WebhookDeliveriesController } from './webhooks/webhook-deliveries.controller';
import { WebhookDeliveryWorker } from './webhooks/webhook-delivery.worker';
import { WebhookSubscriptionsController } from './webhooks/webhook-subscriptions.controller';
import { WebhooksService } from './webhooks/webhooks.service';
import { OutboundAnswerService } from './twilio/webhooks/outbound-answer.service';
import { OutboundCallWebhooksController } from './twilio/webhooks/outbound-call-webhooks.controller';
import { AgentConfigValidator } from './agents-api/agent-config-validation';
import { EngineCredentials } from './agent-engines/engine-credentials';
import { CallAdmissionService } from './call-lifecycle/call-admission.service';
import { CallEndRetrier } from './call-lifecycle/call-end-retrier';
import { CallEndService } from './call-lifecycle/call-end.service';
import { CallReconciler } from './call-lifecycle/call-reconciler.service';
import { CONCURRENCY_POLICY, concurrencyPolicyOf } from './call-lifecycle/concurrency-policy';
import { TenantOutbound } from './outbound/outbound-guard.provider';
import { secretKeyRingProvider } from './secrets/secret-key-ring.provider';
import { SecretsController } from './secrets/secrets.controller';
import { SecretsService } from './secrets/secrets.service';
import { BootstrapOrganization } from './twilio/accounts/bootstrap-organization';
import { TwilioAccountController } from './twilio/accounts/twilio-account.controller';
import { TwilioAccountService } from './twilio/accounts/twilio-account.service';
import { WarmTransferService } from './transfers/warm-transfer.service';
import { WarmTransferWebhooksController } from './transfers/warm-transfer-webhooks.controller';

/** The all-in-one server: admin REST, Twilio webhooks and media streams in one process. */
@Module({})
export class AppModule {
  /** `logDestination`: where log lines go (stdout by default; tests read them back). */
  static forRoot(config: AppConfig, logDestination?: DestinationStream): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        LoggingModule.forRoot(config, logDestination),
        // Its own module so that it shuts down after the calls (this module's providers) have ended.
        TracingModule.forRoot(config),
        DatabaseModule.forRoot({
          databaseUrl: config.database.url,
          dataDir: config.database.dataDir,
          migrate: config.database.migrateOnStart,
          poolMax: config.database.poolMax,
          ...(config.database.sharedEmbeddedUrl === undefined ? {} : { sharedEmbeddedUrl: config.database.sharedEmbeddedUrl }),
          webhooks: { giveUpAfterMs: config.webhooks.giveUpAfterMs },
        }),
      ],
      controllers: [WebhookSubscriptionsController, WebhookDeliveriesController, HealthController, MetricsController, CallsController, AgentsController, PhoneNumbersController, ApiKeysController, FirstRunController, WebCallsController, AgentTestsController, TwilioWebhooksController,
        OutboundCallsController, OutboundCallWebhooksController, WarmTransferWebhooksController, OrganizationController, OrganizationsController, CostsController, SecretsController,
        TwilioAccountController, CallRecordingsController, RecordingLinksController, CallAnalysisController, CampaignsController],
      providers: [
        MetricsRegistry,
        ClusterLink,
        ServerDrain,
        DrainCoordinator,
        KeepAliveOnShutdown,
        CallMetrics,
        LiveCallMetrics,
        EngineErrorMetrics,
        WebhookMetrics,
        InferenceMetrics,
        CapacityMetrics,
        DatabaseMetrics,
        CallRecordBatching,
        { provide: APP_FILTER, useClass: PersistenceErrorFilter },
        { provide: CONCURRENCY_POLICY, useValue: concurrencyPolicyOf(config) },
        CallAdmissionService,
        CallEndService,
        CallEndRetrier,
        CallReconciler,
        RecordingStores,
        RecordingLinkSigner,
        CallRecordingService,
        RecordingRetentionSweeper,
        CallAnalysisRunner,
        CallAnalysisWorker,
        Clock,
        CampaignOutcomes,
        CampaignsService,
        CampaignCallPlacer,
        CampaignDialer,
        secretKeyRingProvider,
        SecretsService,
        BootstrapOrganization,
        TwilioAccountService,
        TenantOutbound,
        EngineCredentials,
        AgentConfigValidator,
        ApiKeyGuard,
        OperatorKeyGuard,
        CallUsageRegistry,
        ApiKeyRateLimiter,
        rateLimitStoreProvider,
        TwilioSignatureGuard,
        InboundCallService,
        WebhookDeliveryWorker,
        WebhooksService,
        DatabaseReadiness,
        ApiKeysService,
        CallCallbacksService,
        AgentsService,
        AgentReadinessService,
        CostsService,
        OperatorOrganizationsService,
        OrganizationSettingsService,
        PhoneNumbersService,
        CallRecordsService,
        CallAnalysisRerunService,
        OutboundCallService,
        OutboundAnswerService,
        MediaUpgradeVerifier,
        CallRuntimes,
        LiveCalls,
        MediaStreamService,
        WarmTransferService,
        MediaStreamGateway,
        WebCallGateway,
        WebCallService,
        AgentTestService,
        AgentTestRunner,
        AgentEngines,
        BootstrapService,
        FirstRunSignInService,
        LiveCallFeedService,
        liveFeedLeaseStoreProvider,
        InferenceService,
        InferenceCapacityService,
        {
          provide: TwilioRestClientFactory,
          useFactory: () => new TwilioRestClientFactory({ accountSid: config.twilio.accountSid, authToken: config.twilio.authToken, apiBaseUrl: config.twilio.apiBaseUrl }),
        },
      ],
    };
  }
}
