import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EmbeddedPostgres } from '../../libs/persistence/src/embedded-postgres';

/**
 * What global-setup created for this jest run, so global-teardown can remove it. Kept both on
 * globalThis (jest runs setup, all projects' tests and teardown in one parent process) and in a
 * JSON file (the handle survives module re-loading between the two hooks).
 */
export interface TestDatabaseState {
  mode: 'postgres' | 'embedded';
  databaseUrl: string;
  /** postgres mode: the server-level URL and the database created on it. */
  serverUrl?: string;
  databaseName?: string;
  /** embedded mode: the temp folder holding PGlite's files. */
  embeddedDataDir?: string;
}

/** Variables global-setup exports to the test workers (besides DATABASE_URL). */
export const TEST_DB_MODE_ENV = 'SWITCHBOARD_TEST_DB_MODE';
export const TEST_SERVER_URL_ENV = 'SWITCHBOARD_TEST_SERVER_URL';

export const DEFAULT_TEST_POSTGRES_URL = 'postgresql://postgres@127.0.0.1:5432/postgres';

interface TestDatabaseGlobals {
  __switchboardTestDatabase?: { state: TestDatabaseState; embedded: EmbeddedPostgres | null };
}

export const testDatabaseGlobals = globalThis as TestDatabaseGlobals;

const STATE_FILE = /^switchboard-test-db-(\d+)\.json$/;

export function stateFilePath(pid = process.pid): string {
  return join(tmpdir(), `switchboard-test-db-${pid}.json`);
}

/**
 * State files of jest runs that were killed before teardown; their fallback PGlite folders
 * go with them (their Postgres databases are swept by name in global-setup).
 */
export function removeAbandonedStateFiles(isProcessAlive: (pid: number) => boolean): void {
  for (const name of readdirSync(tmpdir())) {
    const pid = Number(STATE_FILE.exec(name)?.[1]);
    if (!pid || pid === process.pid || isProcessAlive(pid)) continue;
    const state = readStateFile(pid);
    if (state?.embeddedDataDir) rmSync(state.embeddedDataDir, { recursive: true, force: true });
    rmSync(stateFilePath(pid), { force: true });
  }
}

export function writeStateFile(state: TestDatabaseState): void {
  writeFileSync(stateFilePath(), JSON.stringify(state), 'utf8');
}

export function readStateFile(pid = process.pid): TestDatabaseState | null {
  try {
    return JSON.parse(readFileSync(stateFilePath(pid), 'utf8')) as TestDatabaseState;
  } catch {
    return null;
  }
}

export function removeStateFile(): void {
  rmSync(stateFilePath(), { force: true });
}

/** The same server URL pointing at another database. */
export function withDatabase(serverUrl: string, databaseName: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${databaseName}`;
  return url.toString();
}
