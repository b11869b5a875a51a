import { Controller, Get, Header, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { OperatorKeyGuard } from '../auth/operator-key.guard';
import { MetricsRegistry } from './metrics.registry';

/**
 * `GET /metrics`: Prometheus text format, for the deployment operator (OPERATOR_API_KEY as a Bearer
 * token; Prometheus's `authorization` scrape setting sends it). Process figures only, none of any
 * tenant's data. Event-loop delay percentiles cover the time since the previous scrape.
 */
@ApiExcludeController()
@Controller('metrics')
@UseGuards(OperatorKeyGuard)
export class MetricsController {
  constructor(private readonly metrics: MetricsRegistry) {}

  @Get()
  @Header('Content-Type', 'text/plain; version=0.0.4; charset=utf-8')
  scrape(): Promise<string> {
    return this.metrics.render();
  }
}
