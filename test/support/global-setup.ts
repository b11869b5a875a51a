import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { isProcessAlive } from '../../libs/persistence/src/data-dir-lock';
import { startEmbeddedPostgres } from '../../libs/persistence/src/embedded-postgres';
import { applyMigrations, redactConnectionStrings } from '../../libs/persistence/src/migrations';
import {
  DEFAULT_TEST_POSTGRES_URL,
  removeAbandonedStateFiles,
  TEST_DB_MODE_ENV,
  TEST_SERVER_URL_ENV,
  TestDatabaseState,
  testDatabaseGlobals,
  withDatabase,
  writeStateFile,
} from './test-database-state';

const PROJECT_ROOT = join(__dirname, '..', '..');
const SERVER_PROBE_TIMEOUT_MS = 3_000;
// Jest workers each open a pool against the fallback PGlite; it must accept them all.
const EMBEDDED_FALLBACK_MAX_CONNECTIONS = 64;

/**
 * The specs that start the server as `npm start` does run its build (test/support/built-server.ts):
 * built here once per run, and only when the sources changed since the last build.
 */
function buildServerIfChanged(): void {
  const build = spawnSync(process.execPath, [join(PROJECT_ROOT, 'apps', 'cli', 'build-if-changed.mjs')], { cwd: PROJECT_ROOT, stdio: 'inherit' });
  if (build.status !== 0) throw new Error(`building the server for the tests failed (exit ${build.status ?? build.signal}): see the build's output above`);
}

/**
 * Gives the integration and e2e tests a FRESH database for this jest run, migrated, and
 * exports it as DATABASE_URL to the workers. Jest calls this once per project (integration,
 * e2e) in the same process; the second call reuses the first one's database.
 */
export default async function globalSetup(): Promise<void> {
  const existing = testDatabaseGlobals.__switchboardTestDatabase;
  if (existing) {
    exportToWorkers(existing.state);
    return;
  }
  buildServerIfChanged();

  removeAbandonedStateFiles(isProcessAlive);
  const serverUrl = process.env['TEST_POSTGRES_URL'] ?? DEFAULT_TEST_POSTGRES_URL;
  const unreachable = await probeServer(serverUrl);
  let state: TestDatabaseState;
  let embedded = null;
  if (unreachable === null) {
    const databaseName = `switchboard_test_${Date.now()}_${process.pid}`;
    await withClient(serverUrl, async (client) => {
      await dropAbandonedTestDatabases(client, serverUrl);
      await client.query(`CREATE DATABASE "${databaseName}"`);
    });
    state = { mode: 'postgres', databaseUrl: withDatabase(serverUrl, databaseName), serverUrl, databaseName };
  } else if (process.env['REQUIRE_REAL_POSTGRES'] === '1') {
    throw new Error(
      `REQUIRE_REAL_POSTGRES=1 but PostgreSQL at ${redactConnectionStrings(serverUrl)} is unreachable ` +
        `(${unreachable}). Start it or point TEST_POSTGRES_URL at a reachable server.`,
    );
  } else {
    const embeddedDataDir = mkdtempSync(join(tmpdir(), 'switchboard-test-pglite-'));
    // The data in a subfolder, so its password file and lock (beside it) are removed with the folder.
    embedded = await startEmbeddedPostgres({ dataDir: join(embeddedDataDir, 'pglite'), maxConnections: EMBEDDED_FALLBACK_MAX_CONNECTIONS });
    state = { mode: 'embedded', databaseUrl: embedded.connectionString, embeddedDataDir };
    console.warn(
      `[test db] PostgreSQL at ${redactConnectionStrings(serverUrl)} unreachable (${unreachable}); ` +
        `using embedded PGlite in ${embeddedDataDir} (set REQUIRE_REAL_POSTGRES=1 to fail instead).`,
    );
  }

  // Registered before migrating so that teardown cleans up even when migrations fail.
  testDatabaseGlobals.__switchboardTestDatabase = { state, embedded };
  writeStateFile(state);
  await applyMigrations(state.databaseUrl, { projectRoot: PROJECT_ROOT });
  exportToWorkers(state);
}

/** Workers are forked after global setup and inherit process.env. */
function exportToWorkers(state: TestDatabaseState): void {
  process.env['DATABASE_URL'] = state.databaseUrl;
  process.env[TEST_DB_MODE_ENV] = state.mode;
  if (state.serverUrl) process.env[TEST_SERVER_URL_ENV] = state.serverUrl;
}

// switchboard_test_<ms>_<pid> (this file) and switchboard_test_<label>_<ms>_<pid> (database.ts).
const TEST_DATABASE_NAME = /^switchboard_test_(?:[a-z]+_)?(\d{13})_(\d+)$/;
const ABANDONED_AFTER_MS = 15 * 60_000;

/**
 * A jest run that is killed never reaches global-teardown and leaves its database behind.
 * On a server on this machine, drop test databases whose jest process is gone and that are
 * old enough not to belong to a run starting right now.
 */
async function dropAbandonedTestDatabases(client: Client, serverUrl: string): Promise<void> {
  const host = new URL(serverUrl).hostname;
  if (!['127.0.0.1', 'localhost', '::1', '[::1]'].includes(host)) return;
  const { rows } = await client.query<{ datname: string }>("SELECT datname FROM pg_database WHERE datname LIKE 'switchboard_test_%'");
  for (const { datname } of rows) {
    const match = TEST_DATABASE_NAME.exec(datname);
    if (!match) continue;
    const createdAtMs = Number(match[1]);
    const pid = Number(match[2]);
    if (Date.now() - createdAtMs < ABANDONED_AFTER_MS || isProcessAlive(pid)) continue;
    await client.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`).catch(() => undefined);
  }
}

/** null when the server answers `SELECT 1`, else why not. */
async function probeServer(serverUrl: string): Promise<string | null> {
  try {
    await withClient(serverUrl, (client) => client.query('SELECT 1'));
    return null;
  } catch (error) {
    return redactConnectionStrings(error instanceof Error ? error.message : String(error), serverUrl);
  }
}

async function withClient<T>(url: string, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: SERVER_PROBE_TIMEOUT_MS });
  // A failed connect can also emit 'error'; without a listener that would crash jest.
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}
