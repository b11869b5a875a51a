import { Controller, Get, HttpCode, ServiceUnavailableException } from '@nestjs/common';
import { DatabaseHealth } from '@switchboard/persistence';

@Controller('health')
export class HealthController {
  constructor(private readonly database: DatabaseHealth) {}

  /** Liveness: the process is up and serving HTTP. Never touches dependencies. */
  @Get()
  @HttpCode(200)
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /** Readiness: the database answers, so calls can be recorded. */
  @Get('ready')
  async ready(): Promise<{ status: 'ready'; database: 'up' }> {
    if (!(await this.database.ping())) {
      throw new ServiceUnavailableException({ status: 'not_ready', database: 'down' });
    }
    return { status: 'ready', database: 'up' };
  }
}
