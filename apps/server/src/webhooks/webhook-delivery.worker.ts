import { Inject, Injectable, OnApplicationBootstrap, OnModuleDestroy, Optional } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@switchboard/config';
import {
  SUBSCRIPTION_DELETED,
  WebhookDeliveryRepository,
  WebhookOutbox,
  type ClaimedWebhookDelivery,
  type WebhookAttemptOutcome,
} from '@switchboard/persistence';
import { PinoLogger } from 'nestjs-pino';
import { buildWebhookRequest } from './webhook-request';
import { nextStateAfterFailure } from './webhook-retry-schedule';
import { TenantOutbound } from '../outbound/outbound-guard.provider';
import { sendWebhook } from './webhook-sender';
import { WebhookMetrics } from '../metrics/webhook-metrics';

/** Attempts in flight at once, per process. */
export const WEBHOOK_DELIVERY_CONCURRENCY = 8;
/**
 * Of those, at most this many for one subscription: a receiver that is down keeps its attempts
 * waiting out the timeout, and must not make every other organization's deliveries wait with it.
 */
export const WEBHOOK_DELIVERY_PER_SUBSCRIPTION = 2;
/** ...and at most this many for one organization, however many subscriptions it has. */
export const WEBHOOK_DELIVERY_PER_ORGANIZATION = 4;
/** A claim outlives the request's timeout by this much, so only a dead worker's claim runs out. */
const LEASE_SLACK_MS = 30_000;

/**
 * Works the webhook outbox: claims due deliveries (FOR UPDATE SKIP LOCKED, so several processes
 * can run this side by side), sends them at most WEBHOOK_DELIVERY_CONCURRENCY at a time (and at most
 * WEBHOOK_DELIVERY_PER_SUBSCRIPTION for one subscription), and records
 * every attempt with the next retry (full-jitter backoff) or the final state. Polls every
 * pollIntervalMs, and sooner when an enqueuer commits new deliveries or an attempt frees a slot.
 * A database error never stops it: it is logged and the next round tries again. Delivery is
 * at-least-once (a crash between a receiver's 2xx and the attempt record resends it after the
 * lease); receivers dedupe on webhook-id.
 */
@Injectable()
export class WebhookDeliveryWorker implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly inFlight = new Set<Promise<void>>();
  /** Attempts in flight by subscription and by organization (for the fair claim). */
  private readonly inFlightBySubscription = new Map<string, number>();
  private readonly inFlightByOrganization = new Map<string, number>();
  private loop: Promise<void> | null = null;
  private stopping = false;
  private woken = false;
  private wakeSleeper: (() => void) | null = null;
  private unsubscribe: (() => void) | null = null;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly deliveries: WebhookDeliveryRepository,
    private readonly outbox: WebhookOutbox,
    private readonly outbound: TenantOutbound,
    private readonly logger: PinoLogger,
    @Optional() private readonly metrics?: WebhookMetrics,
  ) {
    this.logger.setContext(WebhookDeliveryWorker.name);
  }

  onApplicationBootstrap(): void {
    if (!this.config.webhooks.workerEnabled) {
      this.logger.info('webhook delivery worker disabled (WEBHOOK_WORKER_ENABLED=false)');
      return;
    }
    this.unsubscribe = this.outbox.onCommitted(() => this.wake());
    this.loop = this.run();
    this.logger.debug({ pollIntervalMs: this.config.webhooks.pollIntervalMs, concurrency: WEBHOOK_DELIVERY_CONCURRENCY }, 'webhook delivery worker started');
  }

  /** Stops claiming, then waits for the attempts in flight (each bounded by the request timeout). */
  async onModuleDestroy(): Promise<void> {
    await this.stopClaiming();
  }

  /**
   * Draining or stopping: claims nothing more and waits for the attempts in flight, so no lease is
   * left to expire; what is still due is delivered by the other instances (or after the restart).
   */
  async stopClaiming(): Promise<void> {
    this.stopping = true;
    this.unsubscribe?.();
    this.wake();
    await this.loop;
  }

  /** Look for due deliveries now instead of at the next poll. */
  wake(): void {
    this.woken = true;
    this.wakeSleeper?.();
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      const free = WEBHOOK_DELIVERY_CONCURRENCY - this.inFlight.size;
      if (free > 0) {
        for (const claimed of await this.claim(free)) this.track(claimed, this.attempt(claimed));
      }
      await this.sleep(this.config.webhooks.pollIntervalMs);
    }
    await Promise.allSettled([...this.inFlight]);
  }

  private async claim(limit: number): Promise<ClaimedWebhookDelivery[]> {
    try {
      return await this.deliveries.claimDue(limit, this.config.webhooks.timeoutMs + LEASE_SLACK_MS, {
        perSubscription: WEBHOOK_DELIVERY_PER_SUBSCRIPTION,
        inFlight: this.inFlightBySubscription,
        perOrganization: WEBHOOK_DELIVERY_PER_ORGANIZATION,
        inFlightByOrganization: this.inFlightByOrganization,
      });
    } catch (error) {
      this.logger.warn({ err: error }, 'could not claim webhook deliveries; retrying at the next poll');
      return [];
    }
  }

  private track(delivery: Pick<ClaimedWebhookDelivery, 'subscriptionId' | 'organizationId'>, attempt: Promise<void>): void {
    this.inFlight.add(attempt);
    increment(this.inFlightBySubscription, delivery.subscriptionId, 1);
    increment(this.inFlightByOrganization, delivery.organizationId, 1);
    void attempt.finally(() => {
      this.inFlight.delete(attempt);
      increment(this.inFlightBySubscription, delivery.subscriptionId, -1);
      increment(this.inFlightByOrganization, delivery.organizationId, -1);
      // A slot is free: there may be more due work.
      this.wake();
    });
  }

  private async attempt(delivery: ClaimedWebhookDelivery): Promise<void> {
    const context = { deliveryId: delivery.deliveryId, eventId: delivery.eventId, eventType: delivery.eventType, attempt: delivery.attemptNumber };
    try {
      if (delivery.subscriptionDeleted) {
        await this.deliveries.abandon(delivery.deliveryId, SUBSCRIPTION_DELETED);
        this.metrics?.attempted('dropped');
        this.logger.info(context, 'webhook delivery dropped: subscription deleted');
        return;
      }
      const startedAt = new Date();
      const request = buildWebhookRequest({ eventId: delivery.eventId, payload: delivery.payload, secret: delivery.secret, now: startedAt });
      const result = await sendWebhook({ url: delivery.url, ...request, timeoutMs: this.config.webhooks.timeoutMs }, this.outbound.fetch);
      const next: WebhookAttemptOutcome['next'] = result.ok
        ? { status: 'delivered' }
        : nextStateAfterFailure({
            attemptNumber: delivery.attemptNumber,
            now: new Date(),
            giveUpAfter: delivery.giveUpAfter,
            schedule: { baseMs: this.config.webhooks.retryBaseMs, maxDelayMs: this.config.webhooks.retryMaxDelayMs },
          });
      const recorded = await this.deliveries.recordAttempt({
        deliveryId: delivery.deliveryId,
        attemptNumber: delivery.attemptNumber,
        startedAt,
        statusCode: result.statusCode,
        latencyMs: result.latencyMs,
        error: result.error,
        responseExcerpt: result.responseExcerpt,
        next,
      });
      this.metrics?.attempted(next.status === 'pending' ? 'retry' : next.status, result.latencyMs);
      if (next.status === 'delivered' && recorded) this.metrics?.delivered(delivery.createdAt);
      // Never the URL's credentials, the secret or the signature: ids, outcome and timing only.
      this.logger.info(
        {
          ...context,
          statusCode: result.statusCode,
          latencyMs: result.latencyMs,
          error: result.error,
          outcome: next.status,
          ...(next.status === 'pending' && { nextAttemptAt: next.nextAttemptAt.toISOString() }),
          ...(!recorded && { recorded: false }),
        },
        'webhook delivery attempt',
      );
    } catch (error) {
      // The claim's lease runs out and the delivery is tried again.
      this.metrics?.attempted('unrecorded');
      this.logger.warn({ ...context, err: error }, 'webhook delivery attempt could not be recorded');
    }
  }

  private async sleep(ms: number): Promise<void> {
    if (this.woken || this.stopping) {
      this.woken = false;
      return;
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wakeSleeper = done;
    });
    this.wakeSleeper = null;
    this.woken = false;
  }
}

/** Counts in flight by key; a key at zero is removed, so the maps only hold what is busy. */
function increment(counts: Map<string, number>, key: string, by: 1 | -1): void {
  const next = (counts.get(key) ?? 0) + by;
  if (next > 0) counts.set(key, next);
  else counts.delete(key);
}
