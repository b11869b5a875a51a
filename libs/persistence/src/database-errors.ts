import { PersistenceError } from './persistence.errors';

// Prisma error codes meaning "the database could not be reached or the connection dropped":
// P1001 can't reach server, P1002 server timed out, P1008 operation timed out,
// P1017 server closed the connection, P2024 timed out waiting for a pool connection,
// P2028 interactive transaction API error (mostly timeouts), P2034 write conflict/deadlock.
const RETRYABLE_PRISMA_CODES = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024', 'P2028', 'P2034']);

// SQLSTATE classes/codes from Postgres that a retry can fix: 08xxx connection exceptions,
// 40001 serialization failure, 40P01 deadlock, 53300 too many connections, 57P0x shutdown,
// and the session bounds (bounded-pg-adapter.ts): 55P03 lock_timeout, 57014 statement_timeout,
// 25P03 idle_in_transaction_session_timeout.
const RETRYABLE_SQLSTATE = /^(08...|40001|40P01|53300|57P0[1-3]|55P03|57014|25P03)$/;

const RETRYABLE_NODE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH']);

const RETRYABLE_MESSAGES = [
  'Connection terminated',
  'connection timeout',
  'timeout exceeded when trying to connect',
  'Connection refused',
  'Too many connections',
  "Can't reach database server",
];

/**
 * Whether a database error is worth retrying (outage, dropped connection, lost race) rather
 * than a bug or constraint violation. Walks the `cause` chain because the pg driver adapter
 * wraps driver errors inside Prisma errors.
 */
export function isRetryableDatabaseError(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current !== null && typeof current === 'object'; depth++) {
    if (current instanceof PersistenceError) return current.retryable;
    const record = current as { code?: unknown; message?: unknown; cause?: unknown; originalCode?: unknown };
    for (const code of [record.code, record.originalCode]) {
      if (typeof code !== 'string') continue;
      if (RETRYABLE_PRISMA_CODES.has(code) || RETRYABLE_SQLSTATE.test(code) || RETRYABLE_NODE_CODES.has(code)) {
        return true;
      }
    }
    const message = typeof record.message === 'string' ? record.message : '';
    if (RETRYABLE_MESSAGES.some((fragment) => message.includes(fragment))) return true;
    current = record.cause;
  }
  return false;
}

/** Prisma's unique-constraint violation (P2002). */
export function isUniqueViolation(error: unknown): boolean {
  return (
    error !== null &&
    typeof error === 'object' &&
    (error as { code?: unknown }).code === 'P2002'
  );
}
