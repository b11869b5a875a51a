/**
 * Errors the persistence layer raises on purpose. Callers branch on `code`, and may retry
 * only when `retryable` is true (the database was unreachable or a transaction lost a race);
 * everything else is a bug or bad input that a retry would not fix.
 */
export type PersistenceErrorCode =
  | 'invalid_input'
  | 'not_found'
  | 'conflict'
  | 'unavailable'
  | 'migration_failed'
  | 'embedded_start_failed';

export class PersistenceError extends Error {
  override readonly name = 'PersistenceError';

  constructor(
    readonly code: PersistenceErrorCode,
    message: string,
    readonly retryable = false,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export function invalidInput(message: string): PersistenceError {
  return new PersistenceError('invalid_input', message);
}
