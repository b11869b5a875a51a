import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { Controller, Get, NotFoundException } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { loadAppConfig } from '@switchboard/config';
import { PinoLogger } from 'nestjs-pino';
import { LoggingModule } from './logging.module';
import { NestLogLevels } from './nest-log-levels';

@Controller('probe')
class ProbeController {
  constructor(private readonly logger: PinoLogger) {}

  @Get()
  answer() {
    this.logger.info({ step: 'inside the handler' }, 'handler ran');
    return { ok: true };
  }

  @Get('outbound')
  outbound() {
    // What an engine or webhook failure logs: the URL it called, in the error, a field and the message.
    const error = new Error('GET https://engine.example/v1?key=err_secret failed', { cause: new Error('at https://engine.example/?sig=cause_secret') });
    this.logger.warn({ err: error, url: 'https://engine.example/v1?api_key=field_secret' }, 'calling https://engine.example/v1?token=%s', 'msg_secret');
    return { ok: true };
  }

  @Get('missing')
  missing() {
    this.logger.warn('about to refuse');
    throw new NotFoundException();
  }
}

describe('LoggingModule', () => {
  let app: NestExpressApplication;
  let baseUrl: string;
  const lines: Array<Record<string, any>> = [];
  const destination = new PassThrough();

  beforeAll(async () => {
    let pending = '';
    destination.on('data', (chunk: Buffer) => {
      pending += chunk.toString('utf8');
      const complete = pending.split('\n');
      pending = complete.pop() ?? '';
      for (const line of complete) if (line) lines.push(JSON.parse(line));
    });
    const moduleRef = await Test.createTestingModule({
      imports: [LoggingModule.forRoot(loadAppConfig({ NODE_ENV: 'test', LOG_LEVEL: 'info' }), destination)],
      controllers: [ProbeController],
    }).compile();
    app = moduleRef.createNestApplication<NestExpressApplication>({ logger: false });
    await app.listen(0, '127.0.0.1');
    baseUrl = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await app?.close();
  });

  const linesOf = (requestId: string) => lines.filter((line) => line['req']?.id === requestId);
  // pino-http writes a request's line once its response has finished, which may be after the client has it.
  const completed = (requestId: string) =>
    new Promise<void>((resolve, reject) => {
      const done = () => lines.some((line) => line['req']?.id === requestId && line['msg'] === 'request completed');
      const check = () => {
        if (!done()) return;
        clearTimeout(timer);
        destination.off('data', check);
        resolve();
      };
      const timer = setTimeout(() => {
        destination.off('data', check);
        reject(new Error(`no "request completed" line for ${requestId}`));
      }, 4_000);
      destination.on('data', check);
      check();
    });

  it('puts the response\'s request id on every line the request logs, and redacts the API key', async () => {
    const response = await fetch(`${baseUrl}/probe`, { headers: { authorization: 'Bearer sk_live_do_not_log_me' } });
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-request-id') ?? '';
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
    await completed(requestId);

    const own = linesOf(requestId);
    expect(own.map((line) => line['msg'])).toEqual(['handler ran', 'request completed']);
    expect(own[0]).toMatchObject({ step: 'inside the handler', service: 'switchboard' });
    expect(own[1]).toMatchObject({ res: { statusCode: 200 } });
    expect(JSON.stringify(lines)).not.toContain('sk_live_do_not_log_me');
    expect(own[1]?.['req']?.headers?.authorization).toBe('[redacted]');
  });

  it('redacts the listed query values in an error, a field and the message a handler logs', async () => {
    const response = await fetch(`${baseUrl}/probe/outbound`);
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-request-id') ?? '';
    await completed(requestId);
    const [line] = linesOf(requestId);
    expect(line?.['msg']).toBe('calling https://engine.example/v1?token=[redacted]');
    expect(line?.['url']).toBe('https://engine.example/v1?api_key=[redacted]');
    expect(line?.['err']?.message).toContain('https://engine.example/v1?key=[redacted]');
    for (const secret of ['err_secret', 'cause_secret', 'field_secret', 'msg_secret']) expect(JSON.stringify(lines)).not.toContain(secret);
  });

  it("moves Nest's start-up chatter (its route table) to debug; Nest's other lines stay at info", async () => {
    const nestLogger = app.get(NestLogLevels);
    const lastArrived = new Promise<void>((resolve) => {
      const check = () => {
        if (!lines.some((line) => line['context'] === 'ProbeModule')) return;
        destination.off('data', check);
        resolve();
      };
      destination.on('data', check);
    });
    nestLogger.log('Mapped {/probe, GET} route', 'RouterExplorer');
    nestLogger.log('Nest application successfully started', 'NestApplication');
    nestLogger.log('something Nest says otherwise', 'ProbeModule');
    // Lines arrive in the order logged: once the last is here, the others would have been too.
    await lastArrived;
    const nestLines = lines.filter((line) => ['RouterExplorer', 'NestApplication', 'ProbeModule'].includes(line['context']));
    expect(nestLines.map((line) => [line['level'], line['msg']])).toEqual([[30, 'something Nest says otherwise']]);
  });

  it('does the same for a request that fails, with the id the client sent', async () => {
    const response = await fetch(`${baseUrl}/probe/missing`, { headers: { 'x-request-id': 'trace-7' } });
    expect(response.status).toBe(404);
    expect(response.headers.get('x-request-id')).toBe('trace-7');
    await completed('trace-7');
    expect(linesOf('trace-7').map((line) => line['msg'])).toEqual(['about to refuse', 'request completed']);
  });
});
