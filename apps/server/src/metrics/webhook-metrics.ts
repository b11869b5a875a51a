import { Injectable } from '@nestjs/common';
import { WebhookDeliveryRepository, type WebhookBacklog } from '@switchboard/persistence';
import { PinoLogger } from 'nestjs-pino';
import { Counter, Gauge, Histogram } from 'prom-client';
import { MetricsRegistry } from './metrics.registry';

/** One attempt's request: a receiver answers in ms; the timeout (WEBHOOK_TIMEOUT_MS) is seconds. */
const REQUEST_BUCKETS_S = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Enqueued to delivered, retries included: sub-second when healthy, hours through an outage. */
const DELIVERY_BUCKETS_S = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15, 60, 300, 1800, 3600, 21600];
/** A scrape reads the backlog from the database at most this often (every instance is scraped). */
const BACKLOG_READ_EVERY_MS = 5_000;

/** What became of one attempt: delivered, retry (scheduled again), failed (gave up), dropped (subscription deleted), unrecorded (database error). */
export type WebhookAttemptResult = 'delivered' | 'retry' | 'failed' | 'dropped' | 'unrecorded';

/**
 * The webhook outbox as Prometheus series: attempts by outcome, each request's time, each
 * delivery's time from enqueue to the receiver's 2xx (what a business waits for an event), and the
 * backlog. Labels: outcome only; never an organization, a URL or an event id.
 *
 * The backlog is the deployment's (one outbox in Postgres shared by every instance), so every
 * instance reports the same figure: dashboards take max() of it, not sum().
 */
@Injectable()
export class WebhookMetrics {
  private readonly attempts: Counter<'outcome'>;
  private readonly requestSeconds: Histogram;
  private readonly deliverySeconds: Histogram;
  private backlog: WebhookBacklog = { due: 0, scheduled: 0, oldestDueSeconds: 0 };
  private backlogReadAtMs = -Infinity;
  private backlogRead: Promise<void> | null = null;

  constructor(
    metrics: MetricsRegistry,
    private readonly deliveries: WebhookDeliveryRepository,
    private readonly logger: PinoLogger,
  ) {
    this.logger.setContext(WebhookMetrics.name);
    const registers = [metrics.registry];
    this.attempts = new Counter({
      name: 'switchboard_webhook_attempts_total',
      help: 'Webhook delivery attempts by this process, by outcome: delivered, retry, failed (retries exhausted), dropped (subscription deleted), unrecorded (database error; the lease retries it).',
      labelNames: ['outcome'],
      registers,
    });
    this.requestSeconds = new Histogram({
      name: 'switchboard_webhook_request_seconds',
      help: "One attempt's HTTP request to the business's endpoint, successful or not.",
      buckets: REQUEST_BUCKETS_S,
      registers,
    });
    this.deliverySeconds = new Histogram({
      name: 'switchboard_webhook_delivery_seconds',
      help: "From the event's commit to the receiver's 2xx, retries included (what the business waits).",
      buckets: DELIVERY_BUCKETS_S,
      registers,
    });
    const read = () => this.readBacklog();
    const backlog = () => this.backlog;
    new Gauge({
      name: 'switchboard_webhook_backlog',
      help: 'Pending webhook deliveries in the shared outbox (deployment-wide: take max() across instances): state "due" waits for a worker, "scheduled" for a retry.',
      labelNames: ['state'],
      registers,
      async collect() {
        await read();
        this.set({ state: 'due' }, backlog().due);
        this.set({ state: 'scheduled' }, backlog().scheduled);
      },
    });
    new Gauge({
      name: 'switchboard_webhook_oldest_due_seconds',
      help: 'How long the oldest due webhook delivery has waited for a worker (deployment-wide; 0 when none is due).',
      registers,
      async collect() {
        await read();
        this.set(backlog().oldestDueSeconds);
      },
    });
  }

  attempted(outcome: WebhookAttemptResult, requestMs?: number): void {
    this.attempts.inc({ outcome });
    if (requestMs !== undefined) this.requestSeconds.observe(requestMs / 1000);
  }

  delivered(enqueuedAt: Date, now = new Date()): void {
    this.deliverySeconds.observe(Math.max(0, now.getTime() - enqueuedAt.getTime()) / 1000);
  }

  /**
   * At most one read per BACKLOG_READ_EVERY_MS, shared by the two gauges of a scrape. A database
   * that does not answer leaves the last figures (the query is bounded by the session's
   * statement_timeout) and is logged, never a failed scrape.
   */
  private readBacklog(): Promise<void> {
    if (performance.now() - this.backlogReadAtMs < BACKLOG_READ_EVERY_MS) return this.backlogRead ?? Promise.resolve();
    this.backlogReadAtMs = performance.now();
    this.backlogRead = this.deliveries
      .backlog()
      .then((backlog) => {
        this.backlog = backlog;
      })
      .catch((error: unknown) => this.logger.warn({ err: error }, 'could not read the webhook backlog for /metrics; showing the last figures'));
    return this.backlogRead;
  }
}
