import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { EmbeddedPostgres, startEmbeddedPostgres } from './embedded-postgres';
import { applyMigrations, redactConnectionStrings, type MigrationResult } from './migrations';
import type { WebhookOutboxOptions } from './webhooks/webhook-outbox';
import { DEFAULT_SESSION_BOUNDS, type SessionBounds } from './bounded-pg-adapter';

/** How long an interactive transaction may wait for a connection (maxWait) and run in all (timeout), ms. */
export interface TransactionTimeouts {
  maxWait: number;
  timeout: number;
}

export const DATABASE_CONNECTION = Symbol('DATABASE_CONNECTION');

export interface DatabaseModuleOptions {
  /** External PostgreSQL. When undefined, an embedded PGlite under `dataDir` is used. */
  databaseUrl?: string;
  /** Root data folder (DATA_DIR); the embedded database lives in `<dataDir>/pglite`. */
  dataDir: string;
  /** Apply committed migrations at boot (default true). Always true for the embedded database. */
  migrate?: boolean;
  /** Pool size for an external database (default 10). The embedded database always gets 1. */
  poolMax?: number;
  /** Outgoing-webhook outbox settings (default: give up after 24 h). */
  webhooks?: WebhookOutboxOptions;
  /** Server-side session bounds for an external database (default DEFAULT_SESSION_BOUNDS). */
  sessionBounds?: SessionBounds;
  /** Interactive transaction bounds (default: PrismaService's). */
  transactionTimeouts?: TransactionTimeouts;
  /**
   * The embedded database as served (and migrated) by another process: the cluster primary
   * (apps/server/src/cluster). This process connects with one connection, like the process that
   * serves it, and neither migrates nor stops it. Takes precedence over `dataDir`.
   */
  sharedEmbeddedUrl?: string;
}

export interface DatabaseConnection {
  connectionString: string;
  poolMax: number;
  /** How long a query may wait for a pooled connection (and for connecting) before failing. */
  acquireTimeoutMs?: number;
  /**
   * Applied to every session of an external database (see bounded-pg-adapter.ts). Not for the
   * embedded one: PGlite runs in this process, where Prisma's own transaction timeout bounds it.
   */
  sessionBounds?: SessionBounds;
  transactionTimeouts?: TransactionTimeouts;
  /** Set when this process serves the database itself; stopped at application shutdown. */
  embedded: EmbeddedPostgres | null;
}

const DEFAULT_EXTERNAL_POOL_MAX = 10;
const EMBEDDED_ACQUIRE_TIMEOUT_MS = 30_000;

/** Resolves where the app's database is, starting and migrating it as the options say. */
export async function openDatabaseConnection(
  options: DatabaseModuleOptions,
  logger = new Logger('Database'),
): Promise<DatabaseConnection> {
  if (options.databaseUrl === undefined) {
    const embedded = options.sharedEmbeddedUrl === undefined ? await serveEmbeddedDatabase(options.dataDir, {}, logger) : null;
    // One connection per process: see embedded-postgres.ts for why PGlite's single session must
    // not be shared more than it has to. Every query queues for it, so a burst may wait longer.
    return {
      connectionString: embedded?.connectionString ?? (options.sharedEmbeddedUrl as string),
      poolMax: 1,
      acquireTimeoutMs: EMBEDDED_ACQUIRE_TIMEOUT_MS,
      ...(options.transactionTimeouts ? { transactionTimeouts: options.transactionTimeouts } : {}),
      embedded,
    };
  }

  if (options.migrate ?? true) {
    const result = await applyMigrations(options.databaseUrl);
    logger.log(`${migrationsLine(result)} (${redactConnectionStrings(options.databaseUrl)})`);
  }
  return {
    connectionString: options.databaseUrl,
    poolMax: options.poolMax ?? DEFAULT_EXTERNAL_POOL_MAX,
    sessionBounds: options.sessionBounds ?? DEFAULT_SESSION_BOUNDS,
    ...(options.transactionTimeouts ? { transactionTimeouts: options.transactionTimeouts } : {}),
    embedded: null,
  };
}

/**
 * Starts the embedded PGlite server on `<dataDir>/pglite` and applies the migrations: what a single
 * process does at boot, and what the cluster primary does once for all its workers.
 */
export async function serveEmbeddedDatabase(
  dataDir: string,
  options: { maxConnections?: number } = {},
  logger = new Logger('Database'),
): Promise<EmbeddedPostgres> {
  const embedded = await startEmbeddedPostgres({ dataDir: join(dataDir, 'pglite'), ...options });
  logger.log(`Embedded PostgreSQL (PGlite) on 127.0.0.1:${embedded.port}, data in ${embedded.dataDir}`);
  try {
    logger.log(migrationsLine(await applyMigrations(embedded.connectionString)));
  } catch (error) {
    await embedded.stop();
    throw error;
  }
  return embedded;
}

function migrationsLine(result: MigrationResult): string {
  return result.ranCli ? `Migrations applied in ${result.durationMs} ms` : `Migrations: all applied already (checked in ${result.durationMs} ms)`;
}
