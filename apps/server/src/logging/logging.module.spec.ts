import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { Controller, Get, NotFoundException } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { loadAppConfig } from '@switchboard/config';
import { PinoLogger } from 'nestjs-pino';
import { LoggingModule } from './logging.module';

@Controller('probe')
class ProbeController {
  constructor(private readonly logger: PinoLogger) {}

  @Get()
  answer() {
    this.logger.info({ step: 'inside the handler' }, 'handler ran');
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

  beforeAll(async () => {
    const destination = new PassThrough();
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
  const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

  it('puts the response\'s request id on every line the request logs, and redacts the API key', async () => {
    const response = await fetch(`${baseUrl}/probe`, { headers: { authorization: 'Bearer sk_live_do_not_log_me' } });
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-request-id') ?? '';
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
    await settle();

    const own = linesOf(requestId);
    expect(own.map((line) => line['msg'])).toEqual(['handler ran', 'request completed']);
    expect(own[0]).toMatchObject({ step: 'inside the handler', service: 'switchboard' });
    expect(own[1]).toMatchObject({ res: { statusCode: 200 } });
    expect(JSON.stringify(lines)).not.toContain('sk_live_do_not_log_me');
    expect(own[1]?.['req']?.headers?.authorization).toBe('[redacted]');
  });

  it('does the same for a request that fails, with the id the client sent', async () => {
    const response = await fetch(`${baseUrl}/probe/missing`, { headers: { 'x-request-id': 'trace-7' } });
    expect(response.status).toBe(404);
    expect(response.headers.get('x-request-id')).toBe('trace-7');
    await settle();
    expect(linesOf('trace-7').map((line) => line['msg'])).toEqual(['about to refuse', 'request completed']);
  });
});
