import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { startEmbeddedPostgres } from '../../libs/persistence/src/embedded-postgres';
import { PrismaService } from '../../libs/persistence/src/prisma.service';
import { AgentRepository } from '../../libs/persistence/src/repositories/agent.repository';
import { ApiKeyRepository } from '../../libs/persistence/src/repositories/api-key.repository';
import { CallAnalysisRepository } from '../../libs/persistence/src/repositories/call-analysis.repository';
import { CallEventRepository } from '../../libs/persistence/src/repositories/call-event.repository';
import { CallRepository } from '../../libs/persistence/src/repositories/call.repository';
import type { CreateInboundCallInput } from '../../libs/persistence/src/repositories/call-identity';
import { CallStreamRepository } from '../../libs/persistence/src/repositories/call-stream.repository';
import {
  OrganizationRecord,
  OrganizationRepository,
} from '../../libs/persistence/src/repositories/organization.repository';
import { PhoneNumberRepository } from '../../libs/persistence/src/repositories/phone-number.repository';
import type { ConcurrencyPolicy } from '../../libs/persistence/src/repositories/call-admission';
import { CostLedger } from '../../libs/persistence/src/billing/cost-ledger';
import { TransactionRunner } from '../../libs/persistence/src/transaction-runner';
import { WebhookOutbox } from '../../libs/persistence/src/webhooks/webhook-outbox';
import { CallAdmissionService } from '../../apps/server/src/call-lifecycle/call-admission.service';
import { CallEndService } from '../../apps/server/src/call-lifecycle/call-end.service';
import { CampaignOutcomes } from '../../apps/server/src/campaigns/campaign-outcomes.service';
import { Clock } from '../../apps/server/src/common/clock';
import { CampaignDialingRepository } from '../../libs/persistence/src/campaigns/campaign-dialing.repository';
import { CampaignRepository } from '../../libs/persistence/src/campaigns/campaign.repository';
import { hashSecret } from '../../libs/persistence/src/secret-hash';
import { TEST_DB_MODE_ENV, TEST_SERVER_URL_ENV, withDatabase } from './test-database-state';

/*
 * Database access for integration and e2e tests. All tests of a run share one database
 * (created by global-setup), so a test must only look at rows it created: start each test
 * with createTestOrganization() and use the unique* helpers for globally unique values.
 */

export function testDatabaseUrl(): string {
  const url = process.env['DATABASE_URL'];
  if (!url) {
    throw new Error('DATABASE_URL is not set: run through jest (integration/e2e projects run test/support/global-setup.ts)');
  }
  return url;
}

export function isEmbeddedTestDatabase(): boolean {
  return process.env[TEST_DB_MODE_ENV] === 'embedded';
}

/** A PrismaService on the run's database; call `$disconnect()` in afterAll. */
export function createTestPrisma(poolMax = 5, connectionString = testDatabaseUrl()): PrismaService {
  return new PrismaService({ connectionString, poolMax });
}

export interface TestRepositories {
  organizations: OrganizationRepository;
  apiKeys: ApiKeyRepository;
  agents: AgentRepository;
  phoneNumbers: PhoneNumberRepository;
  calls: CallRepository;
  callStreams: CallStreamRepository;
  callEvents: CallEventRepository;
  /** The call-lifecycle services (admission, ends) on these repositories, as the server wires them. */
  admission: CallAdmissionService;
  callEnds: CallEndService;
  outbox: WebhookOutbox;
}

/** What integration tests admit calls under unless they say otherwise. */
export const TEST_CONCURRENCY_POLICY: ConcurrencyPolicy = { defaultLimit: 10, cap: 1000 };

export function createRepositories(
  prisma: PrismaService,
  options: { outbox?: WebhookOutbox; concurrency?: ConcurrencyPolicy } = {},
): TestRepositories {
  const calls = new CallRepository(prisma);
  const outbox = options.outbox ?? new WebhookOutbox();
  const transactions = new TransactionRunner(prisma);
  return {
    organizations: new OrganizationRepository(prisma),
    apiKeys: new ApiKeyRepository(prisma),
    agents: new AgentRepository(prisma),
    phoneNumbers: new PhoneNumberRepository(prisma),
    calls,
    callStreams: new CallStreamRepository(prisma),
    callEvents: new CallEventRepository(prisma),
    admission: new CallAdmissionService(transactions, calls, outbox, options.concurrency ?? TEST_CONCURRENCY_POLICY),
    callEnds: new CallEndService(
      transactions,
      calls,
      outbox,
      new CostLedger(outbox),
      new CallAnalysisRepository(prisma),
      new CampaignOutcomes(new CampaignRepository(prisma), new CampaignDialingRepository(prisma), outbox, new Clock()),
    ),
    outbox,
  };
}

/** A new organization no other test sees. */
export function createTestOrganization(repositories: Pick<TestRepositories, 'organizations'>, label = 'test'): Promise<OrganizationRecord> {
  return repositories.organizations.ensure(`${label}-${randomUUID()}`);
}

/** A syntactically valid E.164 number unlikely to collide across tests (+1999 + 10 random digits). */
export function uniqueE164(): string {
  const digits = Array.from(randomBytes(10), (byte) => String(byte % 10)).join('');
  return `+1999${digits}`;
}

/** A Twilio-shaped CallSid ('CA' + 32 hex). */
export function uniqueCallSid(): string {
  return `CA${randomBytes(16).toString('hex')}`;
}

export const TEST_ACCOUNT_SID = `AC${'0'.repeat(32)}`;

/**
 * What the voice webhook would store for a ringing inbound call of the organization's agent, with
 * unique numbers and CallSid and the hash of a fresh stream token (returned raw, to claim the stream).
 */
export function inboundCallInput(
  organizationId: string,
  agentId: string,
  overrides: Partial<CreateInboundCallInput> = {},
): { input: CreateInboundCallInput; rawToken: string } {
  const rawToken = randomBytes(32).toString('base64url');
  const input: CreateInboundCallInput = {
    twilioCallSid: uniqueCallSid(),
    twilioAccountSid: TEST_ACCOUNT_SID,
    fromNumber: uniqueE164(),
    toNumber: uniqueE164(),
    status: 'ringing',
    organizationId,
    agentId,
    agentConfigVersion: 1,
    streamTokenHash: hashSecret(rawToken),
    streamTokenExpiresAt: new Date(Date.now() + 60_000),
    ...overrides,
  };
  return { input, rawToken };
}

export interface ScratchDatabase {
  url: string;
  drop(): Promise<void>;
}

/**
 * An EMPTY database of its own, for tests about migrations themselves: a new database on the
 * test server, or a new PGlite in a temp folder when the run fell back to embedded mode.
 */
export async function createScratchDatabase(label: string): Promise<ScratchDatabase> {
  const serverUrl = process.env[TEST_SERVER_URL_ENV];
  if (isEmbeddedTestDatabase() || !serverUrl) {
    // The data in a subfolder, so its password file and lock (beside it) go with the folder.
    const folder = mkdtempSync(join(tmpdir(), `switchboard-${label}-`));
    const embedded = await startEmbeddedPostgres({ dataDir: join(folder, 'pglite') });
    return {
      url: embedded.connectionString,
      drop: async () => {
        await embedded.stop();
        rmSync(folder, { recursive: true, force: true });
      },
    };
  }
  const name = `switchboard_test_${label}_${Date.now()}_${process.pid}`;
  await onServer(serverUrl, `CREATE DATABASE "${name}"`);
  return {
    url: withDatabase(serverUrl, name),
    drop: () => onServer(serverUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`),
  };
}

async function onServer(serverUrl: string, sql: string): Promise<void> {
  const client = new Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/**
 * A second organization with its own admin API key (raw key returned), for checking that one
 * organization never sees another's data.
 */
export async function createOtherOrganizationKey(repos: Pick<TestRepositories, 'organizations' | 'apiKeys'>, label: string): Promise<string> {
  const organization = await createTestOrganization(repos, label);
  const rawKey = `sk_test_${randomBytes(20).toString('hex')}`;
  await repos.apiKeys.upsertBootstrapKey(organization.id, rawKey);
  return rawKey;
}

/**
 * A client over `prisma` that writes down each operation it is asked for, so a test can show how
 * many statements a repository method issues (interactive transactions are not seen through it).
 */
export function countingPrisma(prisma: PrismaService): { client: PrismaService; operations: string[] } {
  const operations: string[] = [];
  const client = prisma.$extends({
    query: {
      $allOperations: ({ args, query, operation }) => {
        operations.push(operation);
        return query(args);
      },
    },
  });
  return { client: client as unknown as PrismaService, operations };
}
