import { PrismaPg } from '@prisma/adapter-pg';
import type { SqlDriverAdapter, SqlDriverAdapterFactory, SqlQuery, Transaction } from '@prisma/driver-adapter-utils';
import { Pool, type PoolClient, type PoolConfig } from 'pg';
import { PersistenceError } from './persistence.errors';
import { assertNoOpenTransaction } from './transaction-scope';

/**
 * Server-side bounds for every session of an external Postgres, so nothing can hold a connection
 * (and its locks) for ever, whatever the client side does:
 * - idle_in_transaction_session_timeout: a transaction whose client went quiet (a wedged callback,
 *   a frozen process) is ended by the server; its locks go with it.
 * - lock_timeout: waiting for a lock (the organization's admission lock, a row lock) fails clearly
 *   rather than queueing without end behind a stuck holder.
 * - statement_timeout: no single statement runs longer than this.
 */
export interface SessionBounds {
  idleInTransactionMs: number;
  lockTimeoutMs: number;
  statementTimeoutMs: number;
}

export const DEFAULT_SESSION_BOUNDS: SessionBounds = { idleInTransactionMs: 20_000, lockTimeoutMs: 10_000, statementTimeoutMs: 30_000 };

/** The libpq `options` startup parameter that applies the bounds to each new session. */
export function sessionBoundsOptions(bounds: SessionBounds): string {
  return [
    `-c idle_in_transaction_session_timeout=${bounds.idleInTransactionMs}`,
    `-c lock_timeout=${bounds.lockTimeoutMs}`,
    `-c statement_timeout=${bounds.statementTimeoutMs}`,
  ].join(' ');
}

/** How long one wait for a pooled connection took, and whether it got one (false: it timed out or failed). */
export type ConnectionAcquireObserver = (waitMs: number, acquired: boolean) => void;

/**
 * node-postgres pool that refuses to lend a connection to code running inside a transaction
 * callback (see transaction-scope.ts). Queries of the transaction itself run on the connection it
 * already holds and never come here. `onAcquire` sees every wait for a connection (pool.query
 * borrows through connect() too), which is how /metrics shows a pool that is too small.
 */
export function createGuardedPool(config: PoolConfig, onAcquire?: ConnectionAcquireObserver): Pool {
  const pool = new Pool(config);
  const connect = pool.connect.bind(pool) as (...args: unknown[]) => unknown;
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  (pool as { connect: unknown }).connect = (...args: unknown[]) => {
    assertNoOpenTransaction('a query');
    if (!onAcquire) return connect(...args);
    const startedAt = performance.now();
    const observe = (acquired: boolean) => onAcquire(performance.now() - startedAt, acquired);
    const [callback] = args;
    if (typeof callback === 'function') {
      return connect((error: unknown, ...rest: unknown[]) => {
        observe(!error);
        (callback as (...callbackArgs: unknown[]) => void)(error, ...rest);
      });
    }
    return (connect() as Promise<PoolClient>).then(
      (client) => {
        observe(true);
        return client;
      },
      (error: unknown) => {
        observe(false);
        throw error;
      },
    );
  };
  (pool as { query: unknown }).query = (...args: unknown[]) => {
    assertNoOpenTransaction('a query');
    return query(...args);
  };
  return pool;
}

/**
 * Prisma's pg adapter, with two gaps closed:
 * - When COMMIT or ROLLBACK fails (the server ended the session: idle_in_transaction_session_timeout,
 *   a restart, a dropped socket), Prisma never releases the pooled client, so the pool slowly loses
 *   every connection to dead sessions and then wedges. Here the client is handed back *with the
 *   error*, which makes node-postgres discard it and open a fresh one. A failed ROLLBACK is then
 *   reported as done (the session, and the transaction with it, is gone, and Prisma's timeout path
 *   would otherwise end in an unhandled rejection); a failed COMMIT still throws, since the work was
 *   not stored.
 * - Once `closing()` says the client is being disconnected, no transaction starts. Prisma's
 *   $disconnect cancels the transactions still waiting for a connection, but one that gets its
 *   connection afterwards finds itself in a state Prisma does not handle ("Unknown transaction
 *   status"): it throws without releasing the connection, left open in a transaction, so the pool
 *   never finishes closing (and shutdown hangs) until the server's idle-in-transaction timeout
 *   kills the session. Here such a transaction gives its connection straight back and fails as
 *   retryable (a call end is then left to the next process's reconciler).
 */
export function boundedPgAdapter(
  pool: Pool,
  options: ConstructorParameters<typeof PrismaPg>[1],
  closing: () => boolean = () => false,
): SqlDriverAdapterFactory {
  const inner = new PrismaPg(pool, { ...options, disposeExternalPool: true });
  return {
    provider: inner.provider,
    adapterName: inner.adapterName,
    connect: async (): Promise<SqlDriverAdapter> => guardTransactions(await inner.connect(), closing),
  };
}

function closingError(): PersistenceError {
  return new PersistenceError('unavailable', 'the database client is closing: no new transaction starts', true);
}

function guardTransactions(adapter: SqlDriverAdapter, closing: () => boolean): SqlDriverAdapter {
  const startTransaction = adapter.startTransaction.bind(adapter);
  adapter.startTransaction = async (isolationLevel) => {
    if (closing()) throw closingError();
    const transaction = await startTransaction(isolationLevel);
    if (!closing()) return guardEnd(transaction);
    // The wait for a connection outlasted the start of the disconnect: Prisma would leak this one.
    try {
      await transaction.executeRaw({ sql: 'ROLLBACK', args: [], argTypes: [] });
    } catch (error) {
      releaseWithError(transaction, error);
      throw closingError();
    }
    await transaction.rollback();
    throw closingError();
  };
  return adapter;
}

function guardEnd(transaction: Transaction): Transaction {
  const executeRaw = transaction.executeRaw.bind(transaction);
  transaction.executeRaw = async (query: SqlQuery): Promise<number> => {
    try {
      return await executeRaw(query);
    } catch (error) {
      const ending = query.sql === 'ROLLBACK' || query.sql === 'COMMIT';
      if (!ending) throw error;
      releaseWithError(transaction, error);
      if (query.sql === 'ROLLBACK') return 0;
      throw error;
    }
  };
  return transaction;
}

/** Hands the transaction's pooled client back with the error, so node-postgres discards it. */
function releaseWithError(transaction: Transaction, error: unknown): void {
  const client = transaction as unknown as { client: PoolClient; cleanup?: () => void };
  client.cleanup?.();
  client.client.release(error instanceof Error ? error : new Error(String(error)));
}
