import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { DynamicModule, Module } from '@nestjs/common';
import type { AppConfig } from '@switchboard/config';
import { LoggerModule } from 'nestjs-pino';
import type { DestinationStream } from 'pino';
import type { Options as PinoHttpOptions } from 'pino-http';

/** Request headers and body fields that may carry secrets; pino replaces them with "[redacted]". */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers["x-twilio-signature"]',
  'req.headers.cookie',
  '*.authToken',
  '*.apiKey',
  '*.streamToken',
  '*.token',
  '*.value',
  '*.secret',
  '*.signingSecret',
];

/** Structured JSON logs (pino) with a request id on every line and in every response. */
@Module({})
export class LoggingModule {
  /** `destination` defaults to stdout; tests pass a stream to read the lines back. */
  static forRoot(config: AppConfig, destination?: DestinationStream): DynamicModule {
    const options: PinoHttpOptions = {
      level: config.logLevel,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      genReqId: (req: IncomingMessage, res: ServerResponse) => {
        const incoming = req.headers['x-request-id'];
        const id = typeof incoming === 'string' && /^[\w.-]{1,128}$/.test(incoming) ? incoming : randomUUID();
        res.setHeader('x-request-id', id);
        return id;
      },
      customProps: () => ({ service: 'switchboard' }),
      // Health probes would drown the log; everything else is logged once on completion.
      autoLogging: { ignore: (req) => (req.url ?? '').startsWith('/health') },
    };
    return {
      module: LoggingModule,
      imports: [LoggerModule.forRoot({ pinoHttp: destination ? [options, destination] : options })],
    };
  }
}
