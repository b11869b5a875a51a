import { Controller, Get, HttpCode, ServiceUnavailableException } from '@nestjs/common';
import { ApiOkResponse, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import { DatabaseHealth } from '@switchboard/persistence';
import { ServerDrain } from '../lifecycle/server-drain';

@ApiTags('Health')
@Controller('health')
export class HealthController {
  constructor(
    private readonly database: DatabaseHealth,
    private readonly drain: ServerDrain,
  ) {}

  /** Liveness: the process is up and serving HTTP. Never touches dependencies. */
  @Get()
  @HttpCode(200)
  @ApiOkResponse({ description: 'The process is up.', schema: { type: 'object', properties: { status: { type: 'string', enum: ['ok'] } }, required: ['status'] } })
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /**
   * Readiness: the database answers, so calls can be recorded, and this process is not draining (a
   * load balancer then sends new calls to the other instances; liveness stays 200 meanwhile).
   */
  @Get('ready')
  @ApiOkResponse({
    description: 'The database answers.',
    schema: { type: 'object', properties: { status: { type: 'string', enum: ['ready'] }, database: { type: 'string', enum: ['up'] } }, required: ['status', 'database'] },
  })
  @ApiServiceUnavailableResponse({
    description: 'The database does not answer (`{ status: "not_ready", database: "down" }`), or the process is draining after SIGTERM (`{ status: "draining" }`).',
  })
  async ready(): Promise<{ status: 'ready'; database: 'up' }> {
    if (this.drain.draining) throw new ServiceUnavailableException({ status: 'draining' });
    if (!(await this.database.ping())) {
      throw new ServiceUnavailableException({ status: 'not_ready', database: 'down' });
    }
    return { status: 'ready', database: 'up' };
  }
}
