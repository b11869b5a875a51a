import { Injectable } from '@nestjs/common';
import { AGENT_ENGINES } from '@switchboard/persistence';
import { Gauge } from 'prom-client';
import { ServerDrain } from '../server-drain/server-drain';
import { MediaStreamService } from '../twilio/media-stream/media-stream.service';
import { MetricsRegistry } from './metrics.registry';

const DIRECTIONS = ['inbound', 'outbound', 'web'] as const;

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
        // Every direction and engine reads 0 when it has no call: an instance without calls must
        // still report 0 (an autoscaler has no value at all for a series that is absent).
        this.reset();
        for (const direction of DIRECTIONS) for (const engine of AGENT_ENGINES) this.set({ direction, engine }, 0);
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
