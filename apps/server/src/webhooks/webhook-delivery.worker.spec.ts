import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadAppConfig } from '@switchboard/config';
import { WebhookOutbox, type ClaimedWebhookDelivery, type ClaimFairness, type WebhookAttemptOutcome, type WebhookDeliveryRepository } from '@switchboard/persistence';
import type { PinoLogger } from 'nestjs-pino';
import { TenantOutbound } from '../outbound/outbound-guard.provider';
import { WEBHOOK_DELIVERY_CONCURRENCY, WEBHOOK_DELIVERY_PER_ORGANIZATION, WEBHOOK_DELIVERY_PER_SUBSCRIPTION, WebhookDeliveryWorker } from './webhook-delivery.worker';

const silentLogger = { setContext: () => undefined, debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined } as unknown as PinoLogger;

/**
 * The queue, in memory, honouring the fairness the worker asks for (the SQL that does the same in
 * Postgres is tested in test/integration/persistence/webhook-outbox.spec.ts). It records what each
 * claim was told was in flight, which is the worker's part of the bargain.
 */
class InMemoryQueue {
  readonly due: ClaimedWebhookDelivery[] = [];
  readonly recorded: WebhookAttemptOutcome[] = [];
  readonly claims: Array<{ limit: number; inFlight: Record<string, number>; inFlightByOrganization: Record<string, number> }> = [];

  async claimDue(limit: number, _leaseMs: number, fairness?: ClaimFairness): Promise<ClaimedWebhookDelivery[]> {
    const inFlight = Object.fromEntries(fairness?.inFlight ?? []);
    const inFlightByOrganization = Object.fromEntries(fairness?.inFlightByOrganization ?? []);
    this.claims.push({ limit, inFlight, inFlightByOrganization });
    const taken: ClaimedWebhookDelivery[] = [];
    const share = new Map<string, number>();
    const organizationShare = new Map<string, number>();
    for (const delivery of [...this.due]) {
      if (taken.length >= limit) break;
      const used = (inFlight[delivery.subscriptionId] ?? 0) + (share.get(delivery.subscriptionId) ?? 0);
      if (fairness && used >= fairness.perSubscription) continue;
      const organizationUsed = (inFlightByOrganization[delivery.organizationId] ?? 0) + (organizationShare.get(delivery.organizationId) ?? 0);
      if (fairness?.perOrganization !== undefined && organizationUsed >= fairness.perOrganization) continue;
      share.set(delivery.subscriptionId, (share.get(delivery.subscriptionId) ?? 0) + 1);
      organizationShare.set(delivery.organizationId, (organizationShare.get(delivery.organizationId) ?? 0) + 1);
      taken.push(delivery);
      this.due.splice(this.due.indexOf(delivery), 1);
    }
    return taken;
  }

  async recordAttempt(outcome: WebhookAttemptOutcome): Promise<boolean> {
    this.recorded.push(outcome);
    return true;
  }

  async abandon(): Promise<void> {}
}

function delivery(n: number, subscriptionId: string, url: string, organizationId = `org-${subscriptionId}`): ClaimedWebhookDelivery {
  return {
    deliveryId: `d-${subscriptionId}-${n}`,
    eventId: `e-${n}`,
    organizationId,
    subscriptionId,
    eventType: 'call.ended',
    payload: { type: 'call.ended', timestamp: new Date(0).toISOString(), data: { n } },
    attemptNumber: 1,
    giveUpAfter: new Date(Date.now() + 60_000),
    createdAt: new Date(),
    url,
    secret: 'whsec_' + Buffer.alloc(32, 1).toString('base64'),
    subscriptionDeleted: false,
  };
}

async function listen(handler: (request: IncomingMessage, response: ServerResponse) => void): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook` };
}

describe('WebhookDeliveryWorker: one dead receiver does not hold every slot', () => {
  let dead: { server: Server; url: string };
  let live: { server: Server; url: string };
  const liveReceived: number[] = [];

  beforeAll(async () => {
    // Accepts the request and never answers: every attempt waits out the timeout.
    dead = await listen(() => undefined);
    live = await listen((request, response) => {
      liveReceived.push(Date.now());
      request.resume();
      response.writeHead(204).end();
    });
  });
  afterAll(async () => {
    dead.server.closeAllConnections();
    live.server.closeAllConnections();
    await Promise.all([new Promise((resolve) => dead.server.close(resolve)), new Promise((resolve) => live.server.close(resolve))]);
  });

  it('delivers to the live receiver while the dead one is limited to its share of in-flight attempts', async () => {
    const queue = new InMemoryQueue();
    // The dead receiver's backlog is older than the live one's deliveries: an unfair claim would take it all first.
    for (let n = 0; n < 20; n++) queue.due.push(delivery(n, 'dead', dead.url));
    for (let n = 0; n < 4; n++) queue.due.push(delivery(n, 'live', live.url));
    const config = loadAppConfig({ WEBHOOK_TIMEOUT_MS: '2000', WEBHOOK_POLL_INTERVAL_MS: '10', WEBHOOK_WORKER_ENABLED: 'true' });
    const worker = new WebhookDeliveryWorker(config, queue as unknown as WebhookDeliveryRepository, new WebhookOutbox(), new TenantOutbound(loadAppConfig({ OUTBOUND_ALLOWED_HOSTS: '127.0.0.1' })), silentLogger);
    const started = Date.now();
    worker.onApplicationBootstrap();
    try {
      // All four live deliveries arrive long before the first dead attempt could time out.
      const deadline = Date.now() + 1_500;
      while (liveReceived.length < 4 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(liveReceived).toHaveLength(4);
      expect(Math.max(...liveReceived) - started).toBeLessThan(1_500);
      // The worker told every claim what it had in flight, and never more than the share for the dead one.
      const deadInFlight = queue.claims.map((claim) => claim.inFlight['dead'] ?? 0);
      expect(Math.max(...deadInFlight)).toBe(WEBHOOK_DELIVERY_PER_SUBSCRIPTION);
      expect(queue.claims.every((claim) => claim.limit <= WEBHOOK_DELIVERY_CONCURRENCY)).toBe(true);
      expect(queue.due.filter((left) => left.subscriptionId === 'dead')).toHaveLength(20 - WEBHOOK_DELIVERY_PER_SUBSCRIPTION);
    } finally {
      await worker.onModuleDestroy();
    }
    // The dead attempts ended as timeouts and were recorded; the live ones as delivered.
    expect(queue.recorded.filter((outcome) => outcome.error === 'timeout')).toHaveLength(WEBHOOK_DELIVERY_PER_SUBSCRIPTION);
    expect(queue.recorded.filter((outcome) => outcome.next.status === 'delivered')).toHaveLength(4);
  }, 10_000);

  it('keeps one organization with many dead subscriptions to its share of the slots', async () => {
    const queue = new InMemoryQueue();
    liveReceived.length = 0;
    // Four dead subscriptions of one organization: per subscription alone they would take all 8 slots.
    for (const subscription of ['dead-1', 'dead-2', 'dead-3', 'dead-4']) for (let n = 0; n < 5; n++) queue.due.push(delivery(n, subscription, dead.url, 'org-many'));
    for (let n = 0; n < 4; n++) queue.due.push(delivery(n, 'live', live.url));
    const config = loadAppConfig({ WEBHOOK_TIMEOUT_MS: '2000', WEBHOOK_POLL_INTERVAL_MS: '10', WEBHOOK_WORKER_ENABLED: 'true' });
    const worker = new WebhookDeliveryWorker(config, queue as unknown as WebhookDeliveryRepository, new WebhookOutbox(), new TenantOutbound(loadAppConfig({ OUTBOUND_ALLOWED_HOSTS: '127.0.0.1' })), silentLogger);
    worker.onApplicationBootstrap();
    try {
      const deadline = Date.now() + 1_500;
      while (liveReceived.length < 4 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(liveReceived).toHaveLength(4);
      const manyInFlight = queue.claims.map((claim) => claim.inFlightByOrganization['org-many'] ?? 0);
      expect(Math.max(...manyInFlight)).toBe(WEBHOOK_DELIVERY_PER_ORGANIZATION);
      expect(queue.due.filter((left) => left.organizationId === 'org-many')).toHaveLength(20 - WEBHOOK_DELIVERY_PER_ORGANIZATION);
    } finally {
      await worker.onModuleDestroy();
    }
  }, 10_000);
});
