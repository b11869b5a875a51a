import { AsyncLocalStorage } from 'node:async_hooks';
import { Logger } from '@nestjs/common';

/**
 * Catches the one mistake that can wedge the whole server: a transaction callback that waits for a
 * query on ANOTHER pooled connection (`this.prisma.x` instead of `tx.x`, or a nested transaction).
 * Under a burst every pooled connection can be held by such a transaction, each waiting for a free
 * connection that only another one could give back: nothing moves until the timeouts fire, and
 * every request in the meantime hangs. Transactions run their callbacks inside a scope; the pool
 * asks `assertNoOpenTransaction` before lending a connection.
 *
 * In tests (NODE_ENV=test, which Jest sets) or with SWITCHBOARD_STRICT_TRANSACTIONS=1 the query is
 * refused with TransactionMisuseError, so the suite finds every such path; in production it is
 * logged once per call site and allowed (the pool and transaction timeouts still bound it).
 */
export class TransactionMisuseError extends Error {
  override readonly name = 'TransactionMisuseError';
}

interface TransactionScope {
  /** False once the callback settled: work it left running (fire and forget) is no longer "inside". */
  open: boolean;
}

const scopes = new AsyncLocalStorage<TransactionScope>();
const reportedSites = new Set<string>();
const logger = new Logger('TransactionScope');

/** Runs a transaction's callback inside a scope that lasts until the callback settles. */
export function runInTransactionScope<T>(work: () => Promise<T>): Promise<T> {
  const scope: TransactionScope = { open: true };
  return scopes.run(scope, async () => {
    try {
      return await work();
    } finally {
      scope.open = false;
    }
  });
}

/** Whether pool misuse throws (tests, or asked for) rather than only being logged. */
export function strictTransactions(env: NodeJS.ProcessEnv = process.env): boolean {
  return env['SWITCHBOARD_STRICT_TRANSACTIONS'] === '1' || (env['NODE_ENV'] === 'test' && env['SWITCHBOARD_STRICT_TRANSACTIONS'] !== '0');
}

/** Called by the pool before it lends a connection. */
export function assertNoOpenTransaction(operation: string): void {
  if (!scopes.getStore()?.open) return;
  const error = new TransactionMisuseError(
    `${operation} on another pooled connection while a transaction callback is running: use the transaction's own handle (tx), ` +
      'or run the query after the transaction. Waiting for a second connection inside a transaction can exhaust the pool.',
  );
  if (strictTransactions()) throw error;
  const site = (error.stack ?? '').split('\n').slice(2, 6).join('\n');
  if (reportedSites.has(site)) return;
  reportedSites.add(site);
  logger.error(error.stack ?? error.message);
}
