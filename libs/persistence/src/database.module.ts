import { CostRepository } from './billing/cost.repository';
import { CostLedger } from './billing/cost-ledger';
import { TransactionRunner } from './transaction-runner';
import { DynamicModule, Inject, Injectable, Module, OnApplicationShutdown } from '@nestjs/common';
import {
  DATABASE_CONNECTION,
  DatabaseConnection,
  DatabaseModuleOptions,
  openDatabaseConnection,
} from './database-connection';
import { DatabaseHealth } from './database-health';
import { PrismaService } from './prisma.service';
import { AgentRepository } from './repositories/agent.repository';
import { ApiKeyRepository } from './repositories/api-key.repository';
import { AgentTestRepository } from './repositories/agent-test.repository';
import { ConsoleSignInRepository } from './repositories/console-sign-in.repository';
import { CallEventRepository } from './repositories/call-event.repository';
import { CallRecordingRepository } from './repositories/call-recording.repository';
import { CallAnalysisRepository } from './repositories/call-analysis.repository';
import { CampaignDialingRepository } from './campaigns/campaign-dialing.repository';
import { CampaignRepository } from './campaigns/campaign.repository';
import { CallRepository } from './repositories/call.repository';
import { CallStreamRepository } from './repositories/call-stream.repository';
import { CallTransferRepository } from './repositories/call-transfer.repository';
import { ConversationRecordRepository } from './repositories/conversation-record.repository';
import { OrganizationRepository } from './repositories/organization.repository';
import { PhoneNumberRepository } from './repositories/phone-number.repository';
import { OrganizationSecretRepository } from './repositories/organization-secret.repository';
import { TwilioAccountRepository } from './repositories/twilio-account.repository';
import { RateLimitCounterRepository } from './repositories/rate-limit-counter.repository';
import { LiveFeedLeaseRepository } from './repositories/live-feed-lease.repository';
import { WebhookDeliveryRepository } from './webhooks/webhook-delivery.repository';
import { WEBHOOK_OUTBOX_OPTIONS, WebhookOutbox } from './webhooks/webhook-outbox';
import { WebhookSubscriptionRepository } from './webhooks/webhook-subscription.repository';

/**
 * Stops the embedded database after everything else has shut down: DatabaseModule is global, so
 * its shutdown hooks run after every other module's, and the pool is closed before the database.
 */
@Injectable()
class EmbeddedDatabaseShutdown implements OnApplicationShutdown {
  constructor(
    @Inject(DATABASE_CONNECTION) private readonly connection: DatabaseConnection,
    private readonly prisma: PrismaService,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    // PrismaService closes in this same phase (concurrently): wait for it, then stop the server.
    await this.prisma.close();
    await this.connection.embedded?.stop();
  }
}

const REPOSITORIES = [
  OrganizationRepository,
  ApiKeyRepository,
  ConsoleSignInRepository,
  AgentTestRepository,
  AgentRepository,
  PhoneNumberRepository,
  CallRepository,
  CallStreamRepository,
  CallTransferRepository,
  CallEventRepository,
  CallRecordingRepository,
  CallAnalysisRepository,
  CampaignRepository,
  CampaignDialingRepository,
  ConversationRecordRepository,
  WebhookSubscriptionRepository,
  WebhookDeliveryRepository,
  CostRepository,
  RateLimitCounterRepository,
  LiveFeedLeaseRepository,
  OrganizationSecretRepository,
  TwilioAccountRepository,
];

@Module({})
export class DatabaseModule {
  /**
   * Global database module. Without `databaseUrl` it serves an embedded PGlite from
   * `<dataDir>/pglite` and migrates it; with one it migrates unless `migrate: false`.
   * App startup fails with a PersistenceError when the database cannot be opened.
   */
  static forRoot(options: DatabaseModuleOptions): DynamicModule {
    return {
      module: DatabaseModule,
      global: true,
      providers: [
        { provide: DATABASE_CONNECTION, useFactory: () => openDatabaseConnection(options) },
        EmbeddedDatabaseShutdown,
        PrismaService,
        DatabaseHealth,
        ...(options.webhooks ? [{ provide: WEBHOOK_OUTBOX_OPTIONS, useValue: options.webhooks }] : []),
        WebhookOutbox,
        CostLedger,
        TransactionRunner,
        ...REPOSITORIES,
      ],
      exports: [DATABASE_CONNECTION, PrismaService, DatabaseHealth, WebhookOutbox, CostLedger, TransactionRunner, ...REPOSITORIES],
    };
  }
}
