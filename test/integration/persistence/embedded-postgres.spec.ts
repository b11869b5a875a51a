import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
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
  let folder: string;
  let dataDir: string;
  let embedded: EmbeddedPostgres | undefined;

  beforeAll(() => {
    // The data in a subfolder: its password file and lock sit beside it, as in DATA_DIR.
    folder = mkdtempSync(join(tmpdir(), 'switchboard-embedded-spec-'));
    dataDir = join(folder, 'pglite');
  });

  afterAll(async () => {
    await embedded?.stop();
    rmSync(folder, { recursive: true, force: true });
  });

  it('migrates, serves the repositories, and keeps the data across a restart on the same folder', async () => {
    embedded = await startEmbeddedPostgres({ dataDir });
    // The password generated into <dataDir>.password (see the e2e spec for refusals).
    const password = readFileSync(`${dataDir}.password`, 'utf8').trim();
    expect(embedded.connectionString).toMatch(new RegExp(`^postgresql://postgres:${password}@127\\.0\\.0\\.1:\\d+/postgres`));
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

  it('bounds the password handshake: SSL is declined, an oversize startup and a silent client are cut off', async () => {
    const bounded = await startEmbeddedPostgres({ dataDir: join(folder, 'bounds'), handshakeTimeoutMs: 300 });
    try {
      // SSLRequest is answered 'N'; a startup packet claiming 1 MB is refused (08P01) and closed.
      const oversize = await exchange(bounded.port, [sslRequest(), lengthOnly(1_000_000)]);
      expect(oversize.received.subarray(0, 1).toString()).toBe('N');
      expect(oversize.received.subarray(1).toString('latin1')).toContain('C08P01');
      // A client that says nothing is disconnected once the handshake bound passes.
      const silent = await exchange(bounded.port, []);
      expect(silent.received.length).toBe(0);
      // The right password still works.
      const client = await connectOnce(bounded.connectionString);
      await expect(client.query('SELECT 1 AS one')).resolves.toMatchObject({ rows: [{ one: 1 }] });
      await client.end();
    } finally {
      await bounded.stop();
    }
  });
});

/** Writes the messages, then collects what comes back until the server closes the socket. */
function exchange(port: number, messages: Buffer[]): Promise<{ received: Buffer }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => messages.forEach((message) => socket.write(message)));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve({ received: Buffer.concat(chunks) }));
  });
}

function sslRequest(): Buffer {
  const message = Buffer.alloc(8);
  message.writeInt32BE(8, 0);
  message.writeInt32BE(80_877_103, 4);
  return message;
}

/** A protocol 3.0 startup header announcing `length` bytes (none of which follow). */
function lengthOnly(length: number): Buffer {
  const message = Buffer.alloc(8);
  message.writeInt32BE(length, 0);
  message.writeInt32BE(196_608, 4);
  return message;
}


async function connectOnce(url: string): Promise<Client> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}
