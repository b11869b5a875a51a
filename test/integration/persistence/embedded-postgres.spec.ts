import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { EmbeddedPostgres, startEmbeddedPostgres } from '../../../libs/persistence/src/embedded-postgres';
import { applyMigrations } from '../../../libs/persistence/src/migrations';
import { createRepositories, createTestPrisma, uniqueE164 } from '../../support/database';
import { createInboundCall } from './call-fixtures';

const PROJECT_ROOT = join(__dirname, '..', '..', '..');

// PGlite runs Postgres in WASM: migrating it takes seconds, more on a loaded machine.
jest.setTimeout(240_000);

describe('embedded PostgreSQL (PGlite served on a loopback port)', () => {
  let dataDir: string;
  let embedded: EmbeddedPostgres | undefined;

  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'switchboard-embedded-spec-'));
  });

  afterAll(async () => {
    await embedded?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('migrates, serves the repositories, and keeps the data across a restart on the same folder', async () => {
    embedded = await startEmbeddedPostgres({ dataDir });
    expect(embedded.connectionString).toMatch(/^postgresql:\/\/postgres@127\.0\.0\.1:\d+\/postgres/);
    await applyMigrations(embedded.connectionString, { projectRoot: PROJECT_ROOT });

    const e164 = uniqueE164();
    let prisma = createTestPrisma(1, embedded.connectionString);
    let repos = createRepositories(prisma);
    const org = await repos.organizations.ensure('embedded-org');
    const agent = await repos.agents.create({ organizationId: org.id, name: 'echo', engine: 'echo', config: { loop: true } });
    await repos.phoneNumbers.upsert({ organizationId: org.id, e164, agentId: agent.id });
    const { callId } = await createInboundCall(repos, { organizationId: org.id });
    await repos.callEvents.appendMany(callId, [
      { type: 'stream_start', at: new Date(), payload: { streamSid: 'MZ1' } },
      { type: 'dtmf', at: new Date(), payload: { digit: '7' } },
    ]);
    await expect(repos.callEnds.finalise(callId, { endReason: 'caller_hangup', endedAt: new Date() })).resolves.toBe(true);
    await prisma.$disconnect();
    const firstPort = embedded.port;
    await embedded.stop();
    await embedded.stop(); // idempotent

    // The stopped server no longer answers.
    await expect(connectOnce(`postgresql://postgres@127.0.0.1:${firstPort}/postgres`)).rejects.toThrow();

    embedded = await startEmbeddedPostgres({ dataDir });
    // A second server on the same folder would corrupt it: refused while the first runs.
    await expect(startEmbeddedPostgres({ dataDir })).rejects.toMatchObject({ code: 'embedded_start_failed' });
    await applyMigrations(embedded.connectionString, { projectRoot: PROJECT_ROOT }); // already applied: no-op
    prisma = createTestPrisma(1, embedded.connectionString);
    repos = createRepositories(prisma);
    try {
      await expect(repos.organizations.ensure('embedded-org')).resolves.toMatchObject({ id: org.id });
      await expect(repos.phoneNumbers.findRouteByE164(e164)).resolves.toMatchObject({
        organizationId: org.id,
        agentId: agent.id,
        config: { loop: true },
      });
      const detail = await repos.calls.findDetail(org.id, callId);
      expect(detail).toMatchObject({ endReason: 'caller_hangup' });
      expect(detail?.events.map((e) => e.type)).toEqual(['stream_start', 'dtmf']);
    } finally {
      await prisma.$disconnect();
    }
  });

  it('serialises transactions across connections instead of isolating them (why the app pool has ONE connection)', async () => {
    expect(embedded).toBeDefined();
    const url = embedded!.connectionString;
    const a = await connectOnce(url);
    const b = await connectOnce(url);
    try {
      await a.query('CREATE TABLE IF NOT EXISTS isolation_probe (n int)');
      await a.query('BEGIN');
      await a.query('INSERT INTO isolation_probe VALUES (1)');

      let bFinished = false;
      const bRead = b.query<{ n: number }>('SELECT count(*)::int AS n FROM isolation_probe').then((result) => {
        bFinished = true;
        return result.rows[0]?.n;
      });
      // On real Postgres this SELECT would return at once (0 rows, MVCC). On PGlite it waits
      // in pglite-socket's queue until A's transaction ends: one backend, one transaction.
      // A negative check, so a bounded wait: B must NOT answer while A's transaction is open (nothing
      // announces "B is queued"); a slower machine waits longer, which cannot make B answer.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(bFinished).toBe(false);

      await a.query('ROLLBACK');
      await expect(bRead).resolves.toBe(0);
    } finally {
      await a.end();
      await b.end();
    }
  });
});

async function connectOnce(url: string): Promise<Client> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}
