import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { DynamicModule, Module } from '@nestjs/common';
import type { AppConfig } from '@switchboard/config';
import { LoggerModule } from 'nestjs-pino';
import type { DestinationStream, LoggerOptions } from 'pino';
import pinoPretty from 'pino-pretty';
import type { Options as PinoHttpOptions } from 'pino-http';
import { REDACTION_MARKER, redactError, redactRequest, redactResponse, redactStringFields, redactUrls } from './log-redaction';
import { NestLogLevels } from './nest-log-levels';
import { StartupLogGate } from './startup-log-gate';

/**
 * Fields of logged objects that may carry secrets; pino replaces them with the marker. Headers,
 * query values and URLs are redacted by the list in log-redaction.ts, through the serializers below.
 */
export const REDACTED_PATHS = [
  '*.authToken',
  '*.apiKey',
  '*.streamToken',
  '*.token',
  '*.value',
  '*.secret',
  '*.signingSecret',
];

/**
 * Where the log lines go for LOG_FORMAT: `pretty` (and `auto` on a terminal) formats them for a
 * person with pino-pretty, in this process (a line is formatted after pino redacted it); `json`
 * (and `auto` into a pipe or file, as under a process manager or in a container) keeps one JSON
 * object a line on stdout: undefined, pino's own default.
 */
export function logDestination(format: AppConfig['logFormat'], stdout: NodeJS.WriteStream = process.stdout): DestinationStream | undefined {
  const pretty = format === 'pretty' || (format === 'auto' && stdout.isTTY === true);
  if (!pretty) return undefined;
  // `context` (the logging class) is for searching collected logs; on a terminal it would add a
  // line under every message.
  return pinoPretty({ destination: stdout, colorize: stdout.isTTY === true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,service,context', sync: true });
}

/**
 * What every logger of the server shares (the workers' and the cluster primary's): the level, the
 * redaction, and the start-up gate of a cluster's later workers.
 */
export function loggerOptions(config: AppConfig, gate: StartupLogGate = new StartupLogGate(false)): LoggerOptions {
  return {
    level: config.logLevel,
    redact: { paths: REDACTED_PATHS, censor: REDACTION_MARKER },
    // Every line passes log-redaction's one list: the request and response (pino-http hands these
    // pino's own serialization), an error's message and stack, the message, and the string fields
    // a call logs (a URL given as `{ url }`).
    serializers: {
      req: redactRequest,
      res: redactResponse,
      err: redactError,
      msg: (message: unknown) => (typeof message === 'string' ? redactUrls(message) : message),
    },
    formatters: { log: (fields: Record<string, unknown>) => redactStringFields(fields) },
    hooks: {
      logMethod(args, method, level) {
        if (gate.admits(level)) method.apply(this, args);
      },
    },
  };
}

/** Structured logs (pino) with a request id on every line and in every response; JSON or human-readable (LOG_FORMAT). */
@Module({})
export class LoggingModule {
  /**
   * `destination` defaults to stdout in LOG_FORMAT; tests pass a stream to read the lines back.
   * Provides NestLogLevels (the logger for Nest itself) and this process's StartupLogGate, which
   * main.ts opens once the server listens.
   */
  static forRoot(config: AppConfig, destination: DestinationStream | undefined = logDestination(config.logFormat)): DynamicModule {
    const gate = StartupLogGate.forThisProcess(config);
    const options: PinoHttpOptions = {
      ...loggerOptions(config, gate),
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
      providers: [{ provide: StartupLogGate, useValue: gate }, NestLogLevels],
      exports: [StartupLogGate, NestLogLevels],
    };
  }
}
