import { Injectable, type LoggerService } from '@nestjs/common';
import { Logger } from 'nestjs-pino';

/**
 * Nest's own start-up chatter: each module it loaded, each controller and every route it mapped
 * (some 200 lines, once per worker), "Starting Nest application..." and "...successfully started".
 * Useful when a route seems missing (LOG_LEVEL=debug shows them), noise on every other start.
 */
export const NEST_STARTUP_CONTEXTS: ReadonlySet<string> = new Set(['NestFactory', 'InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestApplication', 'WebSocketsController']);

/**
 * The application's Nest logger: nestjs-pino's, with Nest's start-up lines (`log`, from the
 * contexts above) moved to debug. Nest passes the context as the last argument.
 */
@Injectable()
export class NestLogLevels implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, ...optionalParams: unknown[]): void {
    const context = optionalParams[optionalParams.length - 1];
    if (typeof context === 'string' && NEST_STARTUP_CONTEXTS.has(context)) this.logger.debug(message, ...optionalParams);
    else this.logger.log(message, ...optionalParams);
  }

  error(message: unknown, ...optionalParams: unknown[]): void {
    this.logger.error(message, ...optionalParams);
  }

  warn(message: unknown, ...optionalParams: unknown[]): void {
    this.logger.warn(message, ...optionalParams);
  }

  debug(message: unknown, ...optionalParams: unknown[]): void {
    this.logger.debug(message, ...optionalParams);
  }

  verbose(message: unknown, ...optionalParams: unknown[]): void {
    this.logger.verbose(message, ...optionalParams);
  }

  fatal(message: unknown, ...optionalParams: unknown[]): void {
    this.logger.fatal(message, ...optionalParams);
  }
}
