import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DATABASE_CONNECTION, type DatabaseConnection } from '@switchboard/persistence';
import { Client } from 'pg';
import { startTestServer, eventually, type TestServer } from '../support/test-server';

/** Half a second of a quiet line. */
const SILENCE = new Uint8Array(4000).fill(0xff);

/**
 * The zero-set-up default: no DATABASE_URL, so the server serves PGlite on loopback from DATA_DIR,
 * applies the migrations, records calls, and finds them again after a restart.
 */
describe('embedded database default (e2e)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'switchboard-embedded-e2e-'));
  let server: TestServer | undefined;

  afterEach(async () => {
    await server?.close();
    server = undefined;
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('boots without DATABASE_URL, records an echo call, and keeps it across a restart', async () => {
    server = await startTestServer({ DATABASE_URL: '', DATA_DIR: dataDir });
    const ready = await fetch(`${server.serverUrl}/health/ready`);
    expect(ready.status).toBe(200);

    const result = await server.callEcho({ audio: SILENCE, trailingSilenceMs: 200 });
    expect(result.rejected).toBe(false);
    expect(result.latency.framesReceived).toBeGreaterThan(0);
    const callId = result.twiml!.stream!.parameters['callId']!;
    const recorded = await eventually(
      () => server!.api(`/v1/calls/${callId}`),
      (response) => response.status === 200 && response.body.endReason !== null,
    );
    expect(recorded.body.endReason).toBe('stream_stopped');
    await server.close();

    // Same data directory: the call is still there.
    server = await startTestServer({ DATABASE_URL: '', DATA_DIR: dataDir });
    const again = await server.api(`/v1/calls/${callId}`);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ id: callId, endReason: 'stream_stopped' });
  }, 60_000);

  it('refuses a client without the password from DATA_DIR, and makes the password for a database that predates it', async () => {
    // A database folder from before passwords existed has no password file: the first start makes one.
    rmSync(join(dataDir, 'pglite.password'), { force: true });
    server = await startTestServer({ DATABASE_URL: '', DATA_DIR: dataDir });
    const passwordFile = join(dataDir, 'pglite.password');
    if (process.platform !== 'win32') expect(statSync(passwordFile).mode & 0o777).toBe(0o600);
    const password = readFileSync(passwordFile, 'utf8').trim();
    expect(password.length).toBeGreaterThanOrEqual(32);
    // The port the log announces ("Embedded PostgreSQL (PGlite) on 127.0.0.1:<port>").
    const port = server.app.get<DatabaseConnection>(DATABASE_CONNECTION).embedded!.port;
    const url = (credentials: string) => `postgresql://${credentials}@127.0.0.1:${port}/postgres?sslmode=disable`;

    await expect(query(url('postgres:wrong-password'))).rejects.toMatchObject({ code: '28P01' });
    await expect(query(url('x:y'))).rejects.toMatchObject({ code: '28P01' });
    await expect(query(url('postgres'))).rejects.toMatchObject({ code: '28P01' });
    await expect(query(url(`postgres:${password}`))).resolves.toBe(1);
    // The server's own connection still works beside them.
    expect((await fetch(`${server.serverUrl}/health/ready`)).status).toBe(200);
  }, 60_000);
});

/** Connects, runs one query, disconnects. */
async function query(url: string): Promise<number> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    const result = await client.query<{ one: number }>('SELECT 1 AS one');
    return result.rows[0]!.one;
  } finally {
    await client.end();
  }
}
