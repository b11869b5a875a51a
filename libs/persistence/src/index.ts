export { DatabaseModule } from './database.module';
export { DATABASE_CONNECTION, openDatabaseConnection, serveEmbeddedDatabase } from './database-connection';
export type { DatabaseConnection, DatabaseModuleOptions } from './database-connection';
export { PrismaService } from './prisma.service';
export { TransactionRunner } from './transaction-runner';
export type { Tx } from './transaction-runner';
export { DatabaseHealth } from './database-health';
export { startEmbeddedPostgres, EMBEDDED_DEFAULT_MAX_CONNECTIONS } from './embedded-postgres';
export type { EmbeddedPostgres, EmbeddedPostgresOptions } from './embedded-postgres';
export { applyMigrations, findProjectRoot, redactConnectionStrings } from './migrations';
export type { ApplyMigrationsOptions, MigrationResult } from './migrations';
export { PersistenceError, invalidInput } from './persistence.errors';
export type { PersistenceErrorCode } from './persistence.errors';
export { isRetryableDatabaseError, isUniqueViolation } from './database-errors';
export { hashSecret, apiKeyDisplayPrefix, API_KEY_DISPLAY_PREFIX_LENGTH } from './secret-hash';
export { isUuid } from './uuid';

export { OrganizationRepository } from './repositories/organization.repository';
export type { OrganizationCallUsage, OrganizationRecord } from './repositories/organization.repository';
export { AgentTestRepository, type AgentTestRunRecord, type AgentTestRunStatus, type AgentTestSuiteRecord } from './repositories/agent-test.repository';
export { ConsoleSignInRepository, FIRST_RUN_API_KEY_NAME, type ClaimedSignIn, type SignInClaimRefusal } from './repositories/console-sign-in.repository';
export { ApiKeyRepository, BOOTSTRAP_API_KEY_NAME, ADMIN_SCOPE, READ_SCOPE, API_KEY_SCOPES } from './repositories/api-key.repository';
export type { ActiveApiKey, ApiKeyRecord, ApiKeyScope, BootstrapKeyResult, CreateApiKeyInput, CreateWithinLimitResult } from './repositories/api-key.repository';
export { AgentRepository, AGENT_ENGINES, AGENT_LIST_MAX_LIMIT, isAgentEngine } from './repositories/agent.repository';
export type {
  AgentEngine,
  AgentPage,
  AgentRecord,
  AgentConfigSnapshot,
  CreateAgentInput,
  ListAgentsInput,
} from './repositories/agent.repository';
export { PhoneNumberRepository, PHONE_NUMBER_LIST_MAX_LIMIT, isE164 } from './repositories/phone-number.repository';
export type {
  CallRoute,
  ListPhoneNumbersInput,
  PhoneNumberPage,
  PhoneNumberRecord,
  UpsertPhoneNumberInput,
} from './repositories/phone-number.repository';
export { RateLimitCounterRepository, RATE_LIMIT_CLEANUP_MAX_BATCH } from './repositories/rate-limit-counter.repository';
export { LiveFeedLeaseRepository } from './repositories/live-feed-lease.repository';
export type { RateLimitWindowCounts } from './repositories/rate-limit-counter.repository';
export { OrganizationSecretRepository, SECRET_NAME_PATTERN } from './repositories/organization-secret.repository';
export type { OrganizationSecretRecord, SealedSecretColumns, StoredOrganizationSecret } from './repositories/organization-secret.repository';
export { TwilioAccountRepository, ACCOUNT_SID_PATTERN } from './repositories/twilio-account.repository';
export type { StoredTwilioAccount } from './repositories/twilio-account.repository';
export { CallStreamRepository } from './repositories/call-stream.repository';
export { CallTransferRepository, CALL_TRANSFER_STATUSES, OPEN_TRANSFER_STATUSES } from './repositories/call-transfer.repository';
export type { CallTransferRecord, CallTransferStatus, NewCallTransfer, StoredTurn, TransferredCall } from './repositories/call-transfer.repository';
export type { QuietCall, StreamAccount, StreamCallContext, StreamClaim, StreamTokenOutcome } from './repositories/call-stream.repository';
export { CallRepository } from './repositories/call.repository';
export { CALL_LIST_MAX_LIMIT } from './repositories/call-queries';
export type { ListCallsInput } from './repositories/call-queries';
export { assertCallIdentity, callIdentityData } from './repositories/call-identity';
export type { CreateInboundCallInput, CreateRejectedCallInput, TwilioCallIdentity } from './repositories/call-identity';
export type { LockedCall, StatusCallbackInput } from './repositories/call-lifecycle-writes';
export {
  CAPACITY_REASON,
  CONCURRENCY_LIMIT_REASON,
  MACHINE_DETECTION_MODES,
  isOverLimit,
  lockOrganizationCalls,
  readConcurrency,
  recordRefusal,
  WEB_CALL_FROM,
  WEB_CALL_TO,
} from './repositories/call-admission';
export type {
  Admission,
  Refusal,
  AnsweredByInput,
  CapacityRefusalSnapshot,
  ConcurrencyPolicy,
  ConcurrencySnapshot,
  RefusalInput,
  CreateOutboundCallInput,
  CreateWebCallInput,
  IssueOutboundStreamTokenInput,
  MachineDetectionMode,
} from './repositories/call-admission';
export { CallEventRepository, CALL_EVENT_MAX_BATCH } from './repositories/call-event.repository';
export type { CallEventInput } from './repositories/call-event.repository';
export { ConversationRecordRepository, CONVERSATION_RECORD_MAX_BATCH } from './repositories/conversation-record.repository';
export { TRANSCRIPT_ROLES, TRANSCRIPT_SOURCES, TURN_LATENCY_FIELDS } from './repositories/conversation-records';
export type {
  ToolInvocationInput,
  ToolInvocationRecord,
  TranscriptRole,
  TranscriptSource,
  TranscriptTurnInput,
  TranscriptTurnRecord,
  TurnLatencyField,
  TurnLatencyInput,
  TurnLatencyRecord,
} from './repositories/conversation-records';
export type {
  CallDetail,
  CallDirection,
  CallEventRecord,
  CallPage,
  CallRecord,
  StatusTimelineEntry,
} from './repositories/call-records';
export { CALL_DIRECTIONS } from './repositories/call-list-filters';
export { encodeCallCursor, decodeCallCursor } from './repositories/call-cursor';
export type { CallCursor } from './repositories/call-cursor';
export {
  TWILIO_CALL_STATUSES,
  TERMINAL_CALL_STATUSES,
  isTerminalCallStatus,
  isTwilioCallStatus,
} from './repositories/call-status';
export type { TwilioCallStatus } from './repositories/call-status';
export type { InputJsonValue, JsonValue } from './repositories/json';

export { WEBHOOK_EVENT_TYPES, isWebhookEventType } from './webhooks/webhook-event-types';
export type { WebhookEventType } from './webhooks/webhook-event-types';
export {
  WebhookOutbox,
  WEBHOOK_OUTBOX_OPTIONS,
  DEFAULT_WEBHOOK_GIVE_UP_AFTER_MS,
  enqueueWebhookEvent,
  enqueueWebhookEvents,
} from './webhooks/webhook-outbox';
export type { WebhookEnvelope, WebhookEventInput, WebhookOutboxOptions } from './webhooks/webhook-outbox';
export { callEventData } from './webhooks/webhook-payloads';
export { WebhookSubscriptionRepository, generateWebhookSecret, SUBSCRIPTION_DELETED } from './webhooks/webhook-subscription.repository';
export type {
  CreatedWebhookSubscription,
  CreateWebhookSubscriptionInput,
  WebhookSubscriptionRecord,
} from './webhooks/webhook-subscription.repository';
export {
  WebhookDeliveryRepository,
  WEBHOOK_DELIVERY_LIST_MAX_LIMIT,
  WEBHOOK_CLAIM_MAX_LIMIT,
} from './webhooks/webhook-delivery.repository';
export type { ListWebhookDeliveriesInput } from './webhooks/webhook-delivery.repository';
export { WEBHOOK_DELIVERY_STATUSES } from './webhooks/webhook-deliveries';
export type {
  ClaimedWebhookDelivery,
  ClaimFairness,
  WebhookAttemptOutcome,
  WebhookBacklog,
  WebhookDeliveryAttemptRecord,
  WebhookDeliveryDetail,
  WebhookDeliveryPage,
  WebhookDeliveryRecord,
  WebhookDeliveryStatus,
} from './webhooks/webhook-deliveries';

export { CostRepository } from './billing/cost.repository';
export type { CallCostRecord, NewCatalogVersionInput } from './billing/cost.repository';
export type { CostLedgerLineRecord } from './billing/cost-lines';
export { BUDGET_EXCEEDED_REASON, BUDGET_THRESHOLDS, budgetStatusAt, hasHardBudget, isBudgetExhausted } from './billing/budgets';
export { CostLedger } from './billing/cost-ledger';
export type { BudgetStatus } from './billing/budgets';
export { DEFAULT_CATALOG_CURRENCY } from './billing/price-catalogs';
export type { PriceCatalogRecord } from './billing/price-catalogs';
export { USAGE_GROUPINGS } from './billing/usage-report';
export type { UsageGrouping, UsageQuery, UsageReport, UsageRow } from './billing/usage-report';
export { TransactionMisuseError } from './transaction-scope';
export { DEFAULT_SESSION_BOUNDS, type SessionBounds } from './bounded-pg-adapter';
export { CallRecordingRepository } from './repositories/call-recording.repository';
export type { CallRecordingRecord, CallRecordingStatus, ExpiredRecording, NewCallRecording, RecordingStoreKind } from './repositories/call-recording.repository';
export { CallAnalysisRepository, toCallAnalysisRecord } from './repositories/call-analysis.repository';
export type { AnalysisResult, CallAnalysisRecord, CallAnalysisStatus, ClaimedAnalysis } from './repositories/call-analysis.repository';
export { CampaignRepository, CAMPAIGN_LIST_MAX_LIMIT, CAMPAIGN_CONTACT_LIST_MAX_LIMIT } from './campaigns/campaign.repository';
export type { ListCampaignContactsInput } from './campaigns/campaign.repository';
export { CampaignDialingRepository } from './campaigns/campaign-dialing.repository';
export type { AttemptResolution, CallCampaignAttempt, CampaignCallFacts, ClaimedCampaignContact, ExpiredCampaignAttempt } from './campaigns/campaign-dialing.repository';
export { CAMPAIGN_CONTACT_STATUSES, CAMPAIGN_OUTCOMES, CAMPAIGN_STATUSES, VOICEMAIL_MODES, WEEKDAYS, emptyProgress } from './campaigns/campaign-records';
export type {
  CallingWindow,
  CallingWindows,
  CampaignContactCall,
  CampaignContactPage,
  CampaignContactRecord,
  CampaignContactStatus,
  CampaignOutcome,
  CampaignPage,
  CampaignProgress,
  CampaignRecord,
  CampaignRetryPolicy,
  CampaignStatus,
  NewCampaign,
  NewCampaignContact,
  VoicemailMode,
  Weekday,
} from './campaigns/campaign-records';
