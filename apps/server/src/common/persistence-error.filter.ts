import { ArgumentsHost, Catch, ExceptionFilter, HttpStatus } from '@nestjs/common';
import { PersistenceError, type PersistenceErrorCode } from '@switchboard/persistence';
import type { Response } from 'express';

const STATUS_BY_CODE: Record<PersistenceErrorCode, number> = {
  invalid_input: HttpStatus.BAD_REQUEST,
  not_found: HttpStatus.NOT_FOUND,
  conflict: HttpStatus.CONFLICT,
  unavailable: HttpStatus.SERVICE_UNAVAILABLE,
  migration_failed: HttpStatus.SERVICE_UNAVAILABLE,
  embedded_start_failed: HttpStatus.SERVICE_UNAVAILABLE,
};

/**
 * Repository errors carry a code that says whose fault they are; this turns them into the HTTP
 * status an API client can act on (e.g. a forged cursor is a 400, an unreachable database a 503
 * with Retry-After) instead of a generic 500.
 */
@Catch(PersistenceError)
export class PersistenceErrorFilter implements ExceptionFilter<PersistenceError> {
  catch(error: PersistenceError, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse<Response>();
    const status = STATUS_BY_CODE[error.code] ?? HttpStatus.INTERNAL_SERVER_ERROR;
    if (error.retryable) response.setHeader('Retry-After', '1');
    response.status(status).json({
      statusCode: status,
      error: HttpStatus[status],
      code: error.code,
      message: status >= 500 ? 'The database is unavailable; try again shortly.' : error.message,
    });
  }
}
