import { Logger as NestLogger } from '@nestjs/common';
import type { AppConfig } from '@switchboard/config';
import { Logger, PinoLogger } from 'nestjs-pino';
import pino from 'pino';
import { logDestination, loggerOptions } from './logging.module';

/**
 * The cluster primary runs no Nest application, yet its lines belong with its workers': the same
 * format (LOG_FORMAT), level and redaction. What the libraries it calls log through Nest's static
 * Logger (the embedded database it serves) goes the same way. Returns the primary's own logger.
 */
export function useLoggerInPrimary(config: AppConfig): (line: string) => void {
  // Written synchronously, so that a line is out before the workers the primary then messages
  // write theirs (the first-run link must be the last line of a start).
  const destination = logDestination(config.logFormat) ?? pino.destination({ dest: 1, sync: true });
  const params = { pinoHttp: [loggerOptions(config), destination] as [pino.LoggerOptions, pino.DestinationStream] };
  NestLogger.overrideLogger(new Logger(new PinoLogger(params), params));
  const own = new PinoLogger(params);
  own.setContext('ClusterPrimary');
  return (line) => own.info(line);
}
