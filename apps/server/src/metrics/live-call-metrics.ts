import { Injectable } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { ServerDrain } from '../lifecycle/server-drain';
import { MediaStreamService } from '../media/media-stream.service';
import { MetricsRegistry } from './metrics.registry';

/**
 * What to autoscale and route on, read at each scrape: the calls this process carries by direction
 * and agent engine, all its open call sockets (also those still checking their token), and whether
 * it is draining. In a cluster each worker's series carries its `worker` label; sum them.
 */
@Injectable()
export class LiveCallMetrics {
  constructor(metrics: MetricsRegistry, mediaStreams: MediaStreamService, drain: ServerDrain) {
    const registers = [metrics.registry];
    new Gauge({
      name: 'switchboard_live_calls',
      help: 'Calls this process carries now (their agent running), by direction (inbound, outbound, web) and agent engine.',
      labelNames: ['direction', 'engine'],
      registers,
      collect() {
        this.reset();
        for (const labels of mediaStreams.liveCallLabels()) this.inc(labels);
      },
    });
    new Gauge({
      name: 'switchboard_call_connections',
      help: 'Open call sockets (Twilio media streams and browser calls), including those whose token is still being checked: what a drain waits for.',
      registers,
      collect() {
        this.set(mediaStreams.activeConnections);
      },
    });
    new Gauge({
      name: 'switchboard_draining',
      help: '1 while this process drains after SIGTERM (readiness answers 503), else 0.',
      registers,
      collect() {
        this.set(drain.draining ? 1 : 0);
      },
    });
  }
}
