import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { migrationsUpToDate } from '../../../libs/persistence/src/applied-migrations';
import { Prisma } from '../../../libs/persistence/src/generated/prisma/client';
import { applyMigrations } from '../../../libs/persistence/src/migrations';
import { PersistenceError } from '../../../libs/persistence/src/persistence.errors';
import { createScratchDatabase, createTestPrisma, ScratchDatabase } from '../../support/database';

const PROJECT_ROOT = join(__dirname, '..', '..', '..');
const MIGRATION_NAMES = readdirSync(join(PROJECT_ROOT, 'prisma', 'migrations'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();

// Each test here runs the Prisma CLI (a couple of seconds; much more on a loaded machine).
jest.setTimeout(180_000);

/**
 * These tests guard the Prisma pin (prisma 6.19 CLI + adapter-pg 7.10 + WASM schema engine):
 * if an upgrade breaks `migrate deploy` or drifts the client from the migrations, they fail.
 */
describe('applyMigrations()', () => {
  let scratch: ScratchDatabase;

  beforeAll(async () => {
    scratch = await createScratchDatabase('migrations');
  });

  afterAll(async () => {
    await scratch?.drop();
  });

  it('applies every committed migration to an empty database, and is a no-op the second time', async () => {
    const result = await applyMigrations(scratch.url, { projectRoot: PROJECT_ROOT });
    expect(result).toMatchObject({ ranCli: true });
    expect(result.durationMs).toBeGreaterThan(0);

    const client = new Client({ connectionString: scratch.url });
    await client.connect();
    try {
      const tables = await client.query<{ table_name: string }>(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name",
      );
      expect(tables.rows.map((r) => r.table_name)).toEqual([
        '_prisma_migrations',
        'agent_config_versions',
        'agent_test_runs',
        'agent_test_suites',
        'agents',
        'api_keys',
        'budget_alerts',
        'call_analyses',
        'call_costs',
        'call_events',
        'call_recordings',
        'call_refusals',
        'call_transfers',
        'calls',
        'campaign_contacts',
        'campaigns',
        'console_sign_in_links',
        'cost_ledger_lines',
        'live_feed_leases',
        'organization_secrets',
        'organization_twilio_accounts',
        'organizations',
        'phone_numbers',
        'price_catalogs',
        'rate_limit_counters',
        'tool_invocations',
        'transcript_turns',
        'turn_latencies',
        'webhook_deliveries',
        'webhook_delivery_attempts',
        'webhook_events',
        'webhook_subscriptions',
      ]);
      const applied = await client.query<{ migration_name: string }>(
        'SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL ORDER BY migration_name',
      );
      expect(applied.rows.map((r) => r.migration_name)).toEqual(MIGRATION_NAMES);

      // The hand-written CHECK constraints are part of the migration.
      await expect(
        client.query("INSERT INTO organizations (id, name) VALUES ('00000000-0000-4000-8000-000000000001', 'o')").then(() =>
          client.query(
            "INSERT INTO agents (id, organization_id, name, engine) VALUES (gen_random_uuid(), '00000000-0000-4000-8000-000000000001', 'a', 'telepathy')",
          ),
        ),
      ).rejects.toThrow(/agents_engine_check/);
      await expect(
        client.query(
          `INSERT INTO transcript_turns (id, call_id, index, role, source, text, start_ms, end_ms)
           VALUES (gen_random_uuid(), gen_random_uuid(), 0, 'user', 'telepathy', 'hi', 0, 1)`,
        ),
      ).rejects.toThrow(/transcript_turns_source_check/);
      // Only an outbound call may be stored before Twilio gave it a CallSid.
      await expect(
        client.query(
          `INSERT INTO calls (id, organization_id, twilio_account_sid, direction, from_number, to_number, status)
           VALUES (gen_random_uuid(), '00000000-0000-4000-8000-000000000001', 'AC1', 'inbound', '+1', '+2', 'ringing')`,
        ),
      ).rejects.toThrow(/calls_twilio_call_sid_check/);
      // A web call, and only a web call, has no Twilio account.
      await expect(
        client.query(
          `INSERT INTO calls (id, organization_id, twilio_call_sid, twilio_account_sid, direction, from_number, to_number, status)
           VALUES (gen_random_uuid(), '00000000-0000-4000-8000-000000000001', 'CA1', NULL, 'inbound', '+1', '+2', 'ringing')`,
        ),
      ).rejects.toThrow(/calls_twilio_account_sid_check/);
      await expect(
        client.query(
          `INSERT INTO calls (id, organization_id, twilio_account_sid, direction, from_number, to_number, status)
           VALUES (gen_random_uuid(), '00000000-0000-4000-8000-000000000001', 'AC1', 'web', 'browser', 'web', 'in-progress')`,
        ),
      ).rejects.toThrow(/calls_twilio_account_sid_check/);

      // Everything is applied: the CLI is not even run (a restart's usual case).
      expect(await applyMigrations(scratch.url, { projectRoot: PROJECT_ROOT })).toMatchObject({ ranCli: false });
      const again = await client.query('SELECT count(*)::int AS n FROM _prisma_migrations');
      expect(again.rows[0].n).toBe(MIGRATION_NAMES.length);
    } finally {
      await client.end();
    }
  });

  it('leaves the decision to the CLI for a new migration, a half-applied one, or a database without the table', async () => {
    expect(await migrationsUpToDate(scratch.url, PROJECT_ROOT)).toBe(true);

    // The checkout one migration ahead of the database (only the folder names and files are read).
    const aheadRoot = mkdtempSync(join(tmpdir(), 'switchboard-migrations-ahead-'));
    try {
      cpSync(join(PROJECT_ROOT, 'prisma', 'migrations'), join(aheadRoot, 'prisma', 'migrations'), { recursive: true });
      mkdirSync(join(aheadRoot, 'prisma', 'migrations', '29991231000000_next'));
      writeFileSync(join(aheadRoot, 'prisma', 'migrations', '29991231000000_next', 'migration.sql'), 'SELECT 1;\n');
      expect(await migrationsUpToDate(scratch.url, aheadRoot)).toBe(false);
    } finally {
      rmSync(aheadRoot, { recursive: true, force: true });
    }

    const client = new Client({ connectionString: scratch.url });
    await client.connect();
    try {
      // What a migration that failed half-way leaves: a row neither finished nor rolled back.
      await client.query(
        "INSERT INTO _prisma_migrations (id, checksum, migration_name, started_at, applied_steps_count) VALUES ('half-applied', 'x', '29991231000000_half', now(), 0)",
      );
      expect(await migrationsUpToDate(scratch.url, PROJECT_ROOT)).toBe(false);
      await client.query("DELETE FROM _prisma_migrations WHERE id = 'half-applied'");
    } finally {
      await client.end();
    }

    const empty = await createScratchDatabase('migrations-empty');
    try {
      expect(await migrationsUpToDate(empty.url, PROJECT_ROOT)).toBe(false);
    } finally {
      await empty.drop();
    }
    expect(await migrationsUpToDate(`${scratch.url}${scratch.url.includes('?') ? '&' : '?'}schema=other`, PROJECT_ROOT)).toBe(false);
  });

  it('the generated client reads every model from the migrated database (no schema/migration drift)', async () => {
    // findFirst selects every column of the model: a column or table present in
    // schema.prisma but missing from the migrations fails here.
    const prisma = createTestPrisma(1, scratch.url);
    try {
      for (const model of Object.values(Prisma.ModelName)) {
        const delegate = (prisma as unknown as Record<string, { findFirst(): Promise<unknown> }>)[
          model.charAt(0).toLowerCase() + model.slice(1)
        ];
        expect(delegate).toBeDefined();
        await expect(delegate!.findFirst()).resolves.toBeDefined();
      }
    } finally {
      await prisma.$disconnect();
    }
  });

  it('fails with a clear, retryable error that never shows the password when the database is down', async () => {
    const secret = 'sup3r-s3cret-pw';
    const error = await applyMigrations(`postgresql://switchboard:${secret}@127.0.0.1:1/nothing`, {
      projectRoot: PROJECT_ROOT,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PersistenceError);
    expect(error).toMatchObject({ code: 'migration_failed', retryable: true });
    expect((error as Error).message).toMatch(/prisma migrate deploy failed \(exit code \d+\)/);
    expect((error as Error).message).not.toContain(secret);
  });
});
