import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';

/** Long enough for a loaded machine's embedded database; past it, the CLI decides (and says why). */
const CHECK_CONNECT_TIMEOUT_MS = 10_000;

/** The committed migrations: the folders of prisma/migrations that hold a migration.sql. */
export function committedMigrations(projectRoot: string): string[] {
  const folder = join(projectRoot, 'prisma', 'migrations');
  return readdirSync(folder, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(folder, entry.name, 'migration.sql')))
    .map((entry) => entry.name)
    .sort();
}

/**
 * Whether `prisma migrate deploy` would find nothing to do: every committed migration is recorded
 * in _prisma_migrations as finished (and not rolled back), and none there is half-applied. On a
 * restart that is the usual answer, and the CLI takes seconds of CPU to reach it (about 5 s on a
 * 2-core machine, a third of what the server does before it is healthy). Anything else (no table
 * yet, a new migration, a failed one, a connection that fails, a URL naming a schema) is answered
 * false, and the CLI runs as before: this check only ever skips a run that would apply nothing.
 */
export async function migrationsUpToDate(connectionString: string, projectRoot: string): Promise<boolean> {
  // Prisma's `schema` parameter is not Postgres': the table would be looked for in the wrong place.
  if (new URL(connectionString).searchParams.has('schema')) return false;
  const client = new Client({ connectionString, connectionTimeoutMillis: CHECK_CONNECT_TIMEOUT_MS });
  // A connection that breaks after connect() resolved reports here; the query then fails too.
  client.on('error', () => undefined);
  try {
    await client.connect();
    const { rows } = await client.query<{ migration_name: string; finished: boolean; rolled_back: boolean }>(
      'SELECT migration_name, finished_at IS NOT NULL AS finished, rolled_back_at IS NOT NULL AS rolled_back FROM _prisma_migrations',
    );
    if (rows.some((row) => !row.finished && !row.rolled_back)) return false;
    const applied = new Set(rows.filter((row) => row.finished && !row.rolled_back).map((row) => row.migration_name));
    return committedMigrations(projectRoot).every((name) => applied.has(name));
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}
