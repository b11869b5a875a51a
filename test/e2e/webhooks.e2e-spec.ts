import { FakeTwilioRestServer } from '@switchboard/testing';
import { callTo } from '../support/conversation-agents';
import { createOtherOrganizationKey, createRepositories, createScratchDatabase, createTestPrisma, uniqueCallSid, type ScratchDatabase } from '../support/database';
import type { PrismaService } from '../../libs/persistence/src/prisma.service';
import { bindTenantNumber, connectTwilioAccount, type TenantTwilioAccount } from '../support/tenant-twilio';
import { eventually, startTestServer, type TestServer } from '../support/test-server';
import { WebhookReceiver } from '../support/webhook-receiver';
import { sample } from '../support/prometheus-text';
import { setTimeout as sleep } from 'node:timers/promises';

const ALL_CALL_EVENTS = ['call.started', 'call.answered', 'call.ended', 'transcript.turn', 'tool.invoked'];
/** How long the receiver stays down in the outage test: a few of the shrunk retry delays' cap (300 ms). */
const OUTAGE_MS = 1_500;

/**
 * Outgoing webhooks against the real server, Postgres and a real HTTP receiver on 127.0.0.1.
 * Everything happens in an organization of its own (its own key, agent and number), so calls of
 * other spec files in the shared default organization never reach these subscriptions. Retry
 * timings are shrunk so that "a receiver down for minutes" is an outage spanning many retry rounds.
 *
 * The server runs on a database of its own: its delivery worker claims due deliveries of EVERY
 * organization, and other spec files (the cost ledger's, say) leave deliveries to unreachable URLs
 * in the shared one, which would take this worker's slots with their timeouts and retries.
 */
describe('Outgoing webhooks (e2e)', () => {
  let server: TestServer;
  let apiKey: string;
  let number: string;
  /** Twilio's REST API, where the organization's own account (and its number) lives. */
  let twilio: FakeTwilioRestServer;
  /** The organization's own Twilio account: it signs the organization's calls. */
  let account: TenantTwilioAccount;
  const receiver = new WebhookReceiver();
  let database: ScratchDatabase;
  let prisma: PrismaService;

  beforeAll(async () => {
    await receiver.start();
    twilio = await FakeTwilioRestServer.start();
    database = await createScratchDatabase('webhooks');
    server = await startTestServer({
      TWILIO_API_BASE_URL: twilio.baseUrl,
      TWILIO_ACCOUNT_SID: twilio.accountSid,
      TWILIO_AUTH_TOKEN: twilio.authToken,
      DATABASE_URL: database.url,
      MIGRATE_ON_START: 'true',
      WEBHOOK_WORKER_ENABLED: 'true',
      WEBHOOK_RETRY_BASE_MS: '50',
      WEBHOOK_RETRY_MAX_DELAY_MS: '300',
      WEBHOOK_POLL_INTERVAL_MS: '25',
      WEBHOOK_TIMEOUT_MS: '600',
    });
    prisma = createTestPrisma(2, database.url);
    apiKey = await createOtherOrganizationKey(createRepositories(prisma), 'webhooks');
    const agent = await server.api('/v1/agents', { apiKey, method: 'POST', body: { name: 'webhook-echo', engine: 'echo' } });
    expect(agent.status).toBe(201);
    account = await connectTwilioAccount(server, apiKey, twilio);
    number = await bindTenantNumber(server, apiKey, twilio, account, agent.body.id);
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await twilio?.close();
    await receiver.stop();
    await prisma?.$disconnect();
    await database?.drop();
  });

  const api = (path: string, init: Parameters<TestServer['api']>[1] = {}) => server.api(path, { apiKey, ...init });

  /** A call to the organization's number that rings, is answered and hangs up: call.started, .answered, .ended. */
  async function placeShortCall(): Promise<string> {
    const callSid = uniqueCallSid();
    const call = callTo(server, number, { from: '+15550003333', callSid, account });
    const twiml = await call.dial();
    expect(twiml.rejected).toBe(false);
    await call.sendStatusCallback('in-progress');
    await call.sendStatusCallback('completed');
    return twiml.stream!.parameters['callId']!;
  }

  const metrics = async () => (await fetch(`${server.serverUrl}/metrics`)).text();
  async function allDeliveries(subscriptionId: string): Promise<any[]> {
    const items: any[] = [];
    let cursor: string | null = null;
    do {
      const query: string = `/v1/webhook-deliveries?limit=100&subscriptionId=${subscriptionId}${cursor ? `&cursor=${cursor}` : ''}`;
      const page = await api(query);
      expect(page.status).toBe(200);
      items.push(...page.body.data);
      cursor = page.body.nextCursor;
    } while (cursor);
    return items;
  }

  describe('subscriptions API', () => {
    it('answers 401 without an API key', async () => {
      for (const [path, method] of [
        ['/v1/webhook-subscriptions', 'GET'],
        ['/v1/webhook-subscriptions', 'POST'],
        ['/v1/webhook-deliveries', 'GET'],
        [`/v1/webhook-deliveries/${'0'.repeat(8)}-0000-4000-8000-000000000000/replay`, 'POST'],
      ] as const) {
        expect((await server.api(path, { apiKey: null, method, body: method === 'POST' ? {} : undefined })).status).toBe(401);
      }
    });

    it('answers 400 naming the field for a bad URL or an unknown event type', async () => {
      const cases = [
        [{ url: 'ftp://example.com/hooks', events: ['call.ended'] }, 'url'],
        [{ url: 'not a url', events: ['call.ended'] }, 'url'],
        [{ url: 'https://example.com/hooks', events: ['call.exploded'] }, 'events.0'],
        [{ url: 'https://example.com/hooks', events: [] }, 'events'],
        [{ url: 'https://example.com/hooks' }, 'events'],
      ] as const;
      for (const [body, field] of cases) {
        const response = await api('/v1/webhook-subscriptions', { method: 'POST', body });
        expect(response.status).toBe(400);
        expect(response.body.code).toBe('validation_failed');
        expect(response.body.details.map((detail: { field: string }) => detail.field)).toContain(field);
      }
    });

    it('returns the secret once, never in listings, and hides the subscription from other organizations', async () => {
      const created = await api('/v1/webhook-subscriptions', { method: 'POST', body: { url: 'https://example.com/hooks', events: ['call.cost'] } });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ url: 'https://example.com/hooks', events: ['call.cost'], secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/) });
      const listed = await api('/v1/webhook-subscriptions');
      expect(listed.body.data.map((s: { id: string }) => s.id)).toContain(created.body.id);
      expect(JSON.stringify(listed.body)).not.toContain(created.body.secret);
      const one = await api(`/v1/webhook-subscriptions/${created.body.id}`);
      expect(one.status).toBe(200);
      expect(one.body.secret).toBeUndefined();

      // The default organization's key (another organization) sees nothing of it.
      const asOther = (method: 'GET' | 'DELETE') => server.api(`/v1/webhook-subscriptions/${created.body.id}`, { method });
      expect((await asOther('GET')).status).toBe(404);
      expect((await asOther('DELETE')).status).toBe(404);
      expect((await server.api('/v1/webhook-subscriptions')).body.data.map((s: { id: string }) => s.id)).not.toContain(created.body.id);

      expect((await api(`/v1/webhook-subscriptions/${created.body.id}`, { method: 'DELETE' })).status).toBe(204);
      expect((await api(`/v1/webhook-subscriptions/${created.body.id}`)).status).toBe(404);
    });
  });

  describe('delivery', () => {
    let subscriptionId: string;

    beforeAll(async () => {
      const created = await api('/v1/webhook-subscriptions', { method: 'POST', body: { url: receiver.url, events: ALL_CALL_EVENTS } });
      expect(created.status).toBe(201);
      subscriptionId = created.body.id;
      receiver.secret = created.body.secret;
      receiver.mode = { status: 200 };
    });

    it('delivers signed call events, and the delivery log shows each attempt', async () => {
      const callId = await placeShortCall();
      const forCall = () => receiver.received.filter((request) => request.body.data.callId === callId);
      await eventually(async () => forCall().length, (count) => count >= 3);
      const requests = forCall();
      expect(requests.map((request) => request.type).sort()).toEqual(['call.answered', 'call.ended', 'call.started']);
      for (const request of requests) {
        expect(request.signatureValid).toBe(true);
        expect(request.headers['content-type']).toBe('application/json');
        expect(request.body).toEqual({ type: request.type, timestamp: expect.any(String), data: expect.objectContaining({ callId, to: number }) });
        expect(Math.abs(Number(request.timestamp) - Date.now() / 1000)).toBeLessThan(60);
      }
      const ended = requests.find((request) => request.type === 'call.ended')!;
      expect(ended.body.data).toMatchObject({ direction: 'inbound', from: '+15550003333', status: 'completed', endedAt: expect.any(String) });

      const deliveries = (await eventually(() => allDeliveries(subscriptionId), (items) => items.filter((d) => d.callId === callId && d.status === 'delivered').length === 3)).filter(
        (d) => d.callId === callId,
      );
      expect(deliveries).toHaveLength(3);
      for (const delivery of deliveries) {
        expect(delivery).toMatchObject({ status: 'delivered', attemptCount: 1, lastStatusCode: 200, subscriptionId });
        expect(requests.map((request) => request.id)).toContain(delivery.eventId);
      }
      const detail = await api(`/v1/webhook-deliveries/${deliveries[0].id}`);
      expect(detail.status).toBe(200);
      expect(detail.body.attempts).toEqual([
        { attemptNumber: 1, startedAt: expect.any(String), statusCode: 200, latencyMs: expect.any(Number), error: null, responseExcerpt: 'receiver says 200' },
      ]);
      expect(JSON.stringify(detail.body)).not.toContain(receiver.secret);
      // Filters narrow the list.
      const endedOnly = await api(`/v1/webhook-deliveries?subscriptionId=${subscriptionId}&eventType=call.ended&status=delivered&limit=100`);
      expect(endedOnly.body.data.every((d: { eventType: string }) => d.eventType === 'call.ended')).toBe(true);
      expect((await api('/v1/webhook-deliveries?status=lost')).status).toBe(400);
      // Another organization's delivery is a 404.
      expect((await server.api(`/v1/webhook-deliveries/${deliveries[0].id}`)).status).toBe(404);
    });

    it('loses nothing while the receiver is down: every event arrives exactly once after it comes back on the same port', async () => {
      const before = new Set((await allDeliveries(subscriptionId)).map((d) => d.id));
      const producedCallIds: string[] = [await placeShortCall()];
      // A quiet moment (everything so far delivered), then the receiver goes down hard.
      await eventually(() => allDeliveries(subscriptionId), (items) => items.every((d) => d.status === 'delivered'), 10_000);
      await receiver.stop();
      const downSince = receiver.received.length;
      const downAt = Date.now();

      // Calls keep coming while it is down...
      for (let n = 0; n < 3; n++) producedCallIds.push(await placeShortCall());
      // ...and every new delivery fails several rounds in a row.
      const failing = await eventually(
        () => allDeliveries(subscriptionId),
        (items) => {
          const fresh = items.filter((d) => !before.has(d.id) && d.status === 'pending');
          return fresh.length >= 9 && fresh.every((d) => d.attemptCount >= 3);
        },
        15_000,
      );
      expect(failing.filter((d) => !before.has(d.id) && d.status === 'pending').every((d) => d.attemptCount >= 3)).toBe(true);
      expect(receiver.received.length).toBe(downSince);
      // /metrics shows the outage as it happens: attempts to retry, and a backlog.
      const duringOutage = await eventually(metrics, (text) => (sample(text, 'switchboard_webhook_backlog{state="due"}') ?? 0) + (sample(text, 'switchboard_webhook_backlog{state="scheduled"}') ?? 0) >= 9, 10_000);
      expect(sample(duringOutage, 'switchboard_webhook_attempts_total{outcome="retry"}')).toBeGreaterThanOrEqual(27);
      const pendingOne = failing.find((d) => !before.has(d.id) && d.status === 'pending');
      const failedAttempts = (await api(`/v1/webhook-deliveries/${pendingOne.id}`)).body.attempts;
      expect(failedAttempts.length).toBeGreaterThanOrEqual(3);
      for (const attempt of failedAttempts) expect(attempt).toMatchObject({ statusCode: null, error: 'connection_error: ECONNREFUSED' });

      // The outage lasts a stated time, not however long the checks above took: with the test's
      // shrunk retry delays those can all pass within half a second on a quick machine.
      await sleep(Math.max(0, downAt + OUTAGE_MS - Date.now()));
      const upAgainAt = Date.now();
      await receiver.start();
      const outageCallIds = producedCallIds.slice(1);
      for (let n = 0; n < 2; n++) producedCallIds.push(await placeShortCall());

      const settled = await eventually(
        () => allDeliveries(subscriptionId),
        (items) => items.filter((d) => !before.has(d.id)).length === producedCallIds.length * 3 && items.every((d) => d.status === 'delivered'),
        20_000,
      );
      const fresh = settled.filter((d) => !before.has(d.id));
      expect(fresh).toHaveLength(producedCallIds.length * 3);
      expect(fresh.every((d) => d.status === 'delivered')).toBe(true);
      const accepted = receiver.acceptedCountById();
      for (const delivery of fresh) expect({ eventId: delivery.eventId, accepted: accepted.get(delivery.eventId) }).toEqual({ eventId: delivery.eventId, accepted: 1 });
      // Every event of every call produced, none missing.
      for (const callId of producedCallIds) {
        const types = receiver.received.filter((request) => request.body.data.callId === callId && request.answered === 200).map((request) => request.type);
        expect(types.sort()).toEqual(['call.answered', 'call.ended', 'call.started']);
      }
      expect(receiver.received.every((request) => request.signatureValid)).toBe(true);
      // ...and its end: everything delivered, some of it only after the outage (seconds after its event).
      const afterOutage = await eventually(metrics, (text) => sample(text, 'switchboard_webhook_backlog{state="scheduled"}') === 0 && sample(text, 'switchboard_webhook_backlog{state="due"}') === 0, 10_000);
      expect(sample(afterOutage, 'switchboard_webhook_oldest_due_seconds')).toBe(0);
      expect(sample(afterOutage, 'switchboard_webhook_attempts_total{outcome="delivered"}')).toBeGreaterThanOrEqual(producedCallIds.length * 3);
      const delivered = sample(afterOutage, 'switchboard_webhook_delivery_seconds_count')!;
      // Every event of a call made during the outage was delivered only once the receiver was back.
      const ofOutageCalls = fresh.filter((d) => outageCallIds.includes(d.callId));
      expect(ofOutageCalls).toHaveLength(outageCallIds.length * 3);
      for (const delivery of ofOutageCalls) expect(Date.parse(delivery.deliveredAt)).toBeGreaterThanOrEqual(upAgainAt);
      // The histogram counts from the enqueue to the receiver's answer, as the delivery log does:
      // the first outage call's events waited most of the outage, well over half a second.
      const waitedOverHalfSecond = fresh.filter((d) => Date.parse(d.deliveredAt) - Date.parse(d.createdAt) > 500).length;
      expect(waitedOverHalfSecond).toBeGreaterThanOrEqual(3);
      expect(delivered - sample(afterOutage, 'switchboard_webhook_delivery_seconds_bucket{le="0.5"}')!).toBeGreaterThanOrEqual(waitedOverHalfSecond);
      expect(sample(afterOutage, 'switchboard_webhook_request_seconds_count')).toBeGreaterThan(delivered);
    });

    it('replays a delivery as a new one with the same webhook-id', async () => {
      const [delivered] = (await allDeliveries(subscriptionId)).filter((d) => d.status === 'delivered');
      const before = receiver.acceptedCountById().get(delivered.eventId);
      expect(before).toBe(1);

      expect((await server.api(`/v1/webhook-deliveries/${delivered.id}/replay`, { method: 'POST' })).status).toBe(404);
      const replay = await api(`/v1/webhook-deliveries/${delivered.id}/replay`, { method: 'POST' });
      expect(replay.status).toBe(202);
      expect(replay.body).toMatchObject({ eventId: delivered.eventId, replayOfId: delivered.id, status: 'pending', attemptCount: 0 });
      expect(replay.body.id).not.toBe(delivered.id);

      await eventually(async () => receiver.acceptedCountById().get(delivered.eventId), (count) => count === 2);
      const replayDetail = await eventually(() => api(`/v1/webhook-deliveries/${replay.body.id}`), (response) => response.body.status === 'delivered');
      expect(replayDetail.body).toMatchObject({ eventId: delivered.eventId, attemptCount: 1, replayOfId: delivered.id });
      const copies = receiver.received.filter((request) => request.id === delivered.eventId);
      expect(copies[1]!.body).toEqual(copies[0]!.body);
    });
  });

  it('gives up on a receiver that never answers after WEBHOOK_TIMEOUT_MS and logs the attempt as a timeout', async () => {
    const silent = new WebhookReceiver();
    silent.mode = 'hang';
    await silent.start();
    try {
      const created = await api('/v1/webhook-subscriptions', { method: 'POST', body: { url: silent.url, events: ['call.ended'] } });
      silent.secret = created.body.secret;
      const callId = await placeShortCall();
      const [delivery] = await eventually(
        async () => (await allDeliveries(created.body.id)).filter((d) => d.callId === callId && d.attemptCount >= 1),
        (items) => items.length === 1,
        10_000,
      );
      const detail = await api(`/v1/webhook-deliveries/${delivery.id}`);
      const [first] = detail.body.attempts;
      expect(first).toMatchObject({ attemptNumber: 1, statusCode: null, error: 'timeout', responseExcerpt: null });
      expect(first.latencyMs).toBeGreaterThanOrEqual(550);
      expect(first.latencyMs).toBeLessThan(5_000);
      expect(silent.received.filter((request) => request.body.data.callId === callId).length).toBeGreaterThanOrEqual(1);
      // Unsubscribing stops the retries.
      expect((await api(`/v1/webhook-subscriptions/${created.body.id}`, { method: 'DELETE' })).status).toBe(204);
      const after = await eventually(() => api(`/v1/webhook-deliveries/${delivery.id}`), (response) => response.body.status === 'failed', 5_000);
      expect(after.body.lastError).toMatch(/^(subscription_deleted|timeout)$/);
    } finally {
      await silent.stop();
    }
  });
});
