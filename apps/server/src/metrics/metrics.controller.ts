import { Controller, Get, Header, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { MetricsAccessGuard } from './metrics-access.guard';
import { MetricsRegistry } from './metrics.registry';

/**
 * `GET /metrics`: Prometheus text format, for the deployment operator (METRICS_TOKEN as a Bearer
 * token, which Prometheus's `authorization` scrape setting sends; without it, loopback clients only).
 * Process and call figures with bounded labels, none of any tenant's data. Event-loop delay
 * percentiles cover the time since the previous scrape.
 */
@ApiExcludeController()
@Controller('metrics')
@UseGuards(MetricsAccessGuard)
export class MetricsController {
  constructor(private readonly metrics: MetricsRegistry) {}

  @Get()
  @Header('Content-Type', 'text/plain; version=0.0.4; charset=utf-8')
  scrape(): Promise<string> {
    return this.metrics.render();
  }
}
