import { rmSync } from 'node:fs';
import { Client } from 'pg';
import { readStateFile, removeStateFile, testDatabaseGlobals, TestDatabaseState } from './test-database-state';

/**
 * Removes the run's database: DROP DATABASE ... WITH (FORCE) on the real server, or stops the
 * fallback PGlite and deletes its folder. KEEP_TEST_DB=1 keeps a Postgres database for
 * inspection. Jest calls this once per project; the first call does the work.
 */
export default async function globalTeardown(): Promise<void> {
  const held = testDatabaseGlobals.__switchboardTestDatabase;
  const state: TestDatabaseState | null = held?.state ?? readStateFile();
  testDatabaseGlobals.__switchboardTestDatabase = undefined;
  removeStateFile();
  if (!state) return;

  if (state.mode === 'embedded') {
    await held?.embedded?.stop();
    if (state.embeddedDataDir) rmSync(state.embeddedDataDir, { recursive: true, force: true });
    return;
  }
  if (!state.serverUrl || !state.databaseName) return;
  if (process.env['KEEP_TEST_DB'] === '1') {
    console.warn(`[test db] KEEP_TEST_DB=1: kept database ${state.databaseName}`);
    return;
  }
  const client = new Client({ connectionString: state.serverUrl, connectionTimeoutMillis: 3_000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${state.databaseName}" WITH (FORCE)`);
  } finally {
    await client.end().catch(() => undefined);
  }
}
