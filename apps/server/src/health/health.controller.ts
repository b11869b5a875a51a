import { Controller, Get, HttpCode, ServiceUnavailableException } from '@nestjs/common';
import { ApiOkResponse, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import { DatabaseHealth } from '@switchboard/persistence';

@ApiTags('Health')
@Controller('health')
export class HealthController {
  constructor(private readonly database: DatabaseHealth) {}

  /** Liveness: the process is up and serving HTTP. Never touches dependencies. */
  @Get()
  @HttpCode(200)
  @ApiOkResponse({ description: 'The process is up.', schema: { type: 'object', properties: { status: { type: 'string', enum: ['ok'] } }, required: ['status'] } })
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /** Readiness: the database answers, so calls can be recorded. */
  @Get('ready')
  @ApiOkResponse({
    description: 'The database answers.',
    schema: { type: 'object', properties: { status: { type: 'string', enum: ['ready'] }, database: { type: 'string', enum: ['up'] } }, required: ['status', 'database'] },
  })
  @ApiServiceUnavailableResponse({ description: 'The database does not answer: `{ status: "not_ready", database: "down" }`.' })
  async ready(): Promise<{ status: 'ready'; database: 'up' }> {
    if (!(await this.database.ping())) {
      throw new ServiceUnavailableException({ status: 'not_ready', database: 'down' });
    }
    return { status: 'ready', database: 'up' };
  }
}
