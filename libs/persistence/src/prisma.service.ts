import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import type { Pool } from 'pg';
import { PrismaClient } from './generated/prisma/client';
import { boundedPgAdapter, createGuardedPool, sessionBoundsOptions, type ConnectionAcquireObserver } from './bounded-pg-adapter';
import { DATABASE_CONNECTION, DatabaseConnection } from './database-connection';
import { runInTransactionScope } from './transaction-scope';

const DEFAULT_ACQUIRE_TIMEOUT_MS = 5_000;
const DISCONNECT_TIMEOUT_MS = 5_000;
// Prisma's defaults (2 s to start, 5 s to finish) are tight for a pool of one on the
// embedded database, where a transaction queues behind every other query. Every transaction here
// runs a handful of its own statements; one still open after `timeout` is stuck and is rolled back.
const DEFAULT_TRANSACTION_OPTIONS = { maxWait: 10_000, timeout: 15_000 };

/**
 * The one PrismaClient of the process, running queries through node-postgres
 * (@prisma/adapter-pg) with Prisma's TypeScript query compiler: no Rust engine binary.
 * Only repositories use it; services depend on repositories.
 */
@Injectable()
export class PrismaService extends PrismaClient implements OnApplicationShutdown {
  constructor(
    @Inject(DATABASE_CONNECTION)
    connection: Pick<DatabaseConnection, 'connectionString' | 'poolMax' | 'acquireTimeoutMs' | 'sessionBounds' | 'transactionTimeouts'>,
  ) {
    const logger = new Logger('PrismaService');
    const acquireObservers = new Set<ConnectionAcquireObserver>();
    const pool = createGuardedPool({
      connectionString: connection.connectionString,
      max: connection.poolMax,
      // node-postgres applies this both to opening a connection and to waiting for a free one.
      connectionTimeoutMillis: connection.acquireTimeoutMs ?? DEFAULT_ACQUIRE_TIMEOUT_MS,
      // A peer that vanished without closing (a dead host, a dropped route) is noticed by TCP
      // keepalive and the connection is replaced, rather than held for the kernel's hours-long default.
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      ...(connection.sessionBounds ? { options: sessionBoundsOptions(connection.sessionBounds) } : {}),
    }, (waitMs, acquired) => {
      for (const observer of acquireObservers) observer(waitMs, acquired);
    });
    super({
      transactionOptions: connection.transactionTimeouts ?? DEFAULT_TRANSACTION_OPTIONS,
      adapter: boundedPgAdapter(
        pool,
        {
          // Without a listener an idle client's error (server restart, network drop) would be
          // an unhandled 'error' event and crash the process; the pool replaces the client.
          onPoolError: (error) => logger.warn(`Idle database connection failed: ${error.message}`),
          onConnectionError: (error) => logger.warn(`Database connection failed: ${error.message}`),
        },
        () => this.closing !== undefined,
      ),
    });
    this.pool = pool;
    this.acquireObservers = acquireObservers;
    // Interactive transactions run their callback in a scope the pool checks (transaction-scope.ts).
    const transaction = this.$transaction.bind(this) as (arg: unknown, options?: unknown) => Promise<unknown>;
    (this as { $transaction: unknown }).$transaction = (arg: unknown, options?: unknown) =>
      typeof arg === 'function' ? transaction((tx: unknown) => runInTransactionScope(() => (arg as (tx: unknown) => Promise<unknown>)(tx)), options) : transaction(arg, options);
  }

  /** The node-postgres pool under Prisma (connections lent and waiting, for diagnostics). */
  readonly pool: Pool;
  private readonly acquireObservers: Set<ConnectionAcquireObserver>;

  /** Calls `observer` after every wait for a pooled connection (for /metrics); returns the way to stop. */
  observeConnectionAcquires(observer: ConnectionAcquireObserver): () => void {
    this.acquireObservers.add(observer);
    return () => this.acquireObservers.delete(observer);
  }

  /** Set once close() began: no transaction starts from then on (see boundedPgAdapter). */
  private closing: Promise<void> | undefined;

  /**
   * Closed in the application's LAST shutdown phase, not in onModuleDestroy: every other module's
   * shutdown still writes (live calls ended and finalised, the call-end retrier's grace, the
   * records' group commits), and DatabaseModule is global, so Nest runs its shutdown hooks after
   * every other module's. Closing earlier made those writes race the pool's close.
   */
  onApplicationShutdown(): Promise<void> {
    return this.close();
  }

  /**
   * Closes the pool (idempotent), but never lets shutdown hang on it: a connection that is still
   * checked out (a query the database never answers) would otherwise keep the process alive forever.
   */
  close(): Promise<void> {
    this.closing ??= this.disconnectBounded();
    return this.closing;
  }

  private async disconnectBounded(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), DISCONNECT_TIMEOUT_MS);
      timer.unref();
    });
    const outcome = await Promise.race([this.$disconnect().then(() => 'closed' as const), timedOut]);
    clearTimeout(timer);
    if (outcome === 'timeout') {
      new Logger('PrismaService').warn(`Database pool did not close within ${DISCONNECT_TIMEOUT_MS} ms; continuing shutdown`);
    }
  }
}
