import { randomBytes } from 'node:crypto';
import { enqueueWebhookEvent, PrismaService } from '@switchboard/persistence';
import { createOtherOrganizationKey, createRepositories, createTestPrisma } from '../support/database';
import { startTestServer, type TestServer } from '../support/test-server';

/**
 * What the operator decides stays the operator's: an organization chooses its concurrency limit only
 * under the cap the operator set, its calls are billed with the operator's prices (its own catalog
 * only re-prices its reports), and it cannot make the server replay webhooks without limit.
 */
describe("Operator limits are the operator's (e2e)", () => {
  const operatorKey = `op_${randomBytes(24).toString('hex')}`;
  const prisma = createTestPrisma(2);
  let server: TestServer;
  let orgKey: string;
  let organizationId: string;

  beforeAll(async () => {
    server = await startTestServer({ OPERATOR_API_KEY: operatorKey, MAX_CONCURRENT_CALLS_CAP: '1000', WEBHOOK_REPLAYS_PER_HOUR: '2' });
    orgKey = await createOtherOrganizationKey(createRepositories(prisma), 'operator-limits');
    organizationId = (await server.api('/v1/organization', { apiKey: orgKey })).body.id;
  }, 30_000);

  afterAll(async () => {
    await server?.close();
    await prisma.$disconnect();
  });

  const tenant = (path: string, init: Parameters<TestServer['api']>[1] = {}) => server.api(path, { apiKey: orgKey, ...init });
  const operator = (path: string, init: Parameters<TestServer['api']>[1] = {}) => server.api(path, { apiKey: operatorKey, ...init });

  describe('the concurrency cap', () => {
    it('keeps a tenant\'s own limit under the cap: MAX_CONCURRENT_CALLS_CAP, or the one the operator set for it', async () => {
      const overDeploymentCap = await tenant('/v1/organization', { method: 'PATCH', body: { maxConcurrentCalls: 1001 } });
      expect(overDeploymentCap.status).toBe(400);
      expect(overDeploymentCap.body.details).toEqual([{ path: 'maxConcurrentCalls', message: "must be at most 1000 (the operator's cap)" }]);

      // The tenant's key cannot touch the cap.
      expect((await tenant(`/v1/organizations/${organizationId}`, { method: 'PATCH', body: { maxConcurrentCallsCap: 500 } })).status).toBe(401);
      const capped = await operator(`/v1/organizations/${organizationId}`, { method: 'PATCH', body: { maxConcurrentCallsCap: 3 } });
      expect(capped.status).toBe(200);
      expect(capped.body).toMatchObject({ id: organizationId, maxConcurrentCallsCap: 3 });

      expect((await tenant('/v1/organization', { method: 'PATCH', body: { maxConcurrentCalls: 4 } })).body.message).toMatch(/at most 3/);
      const within = await tenant('/v1/organization', { method: 'PATCH', body: { maxConcurrentCalls: 3 } });
      expect(within.body).toMatchObject({ maxConcurrentCalls: 3, maxConcurrentCallsCap: 3, effectiveMaxConcurrentCalls: 3 });
      // The default (null) is also held under the cap.
      const defaulted = await tenant('/v1/organization', { method: 'PATCH', body: { maxConcurrentCalls: null } });
      expect(defaulted.body).toMatchObject({ maxConcurrentCalls: null, maxConcurrentCallsCap: 3, effectiveMaxConcurrentCalls: 3 });
    });

    it('enforces a lowered cap over a limit chosen before it', async () => {
      await operator(`/v1/organizations/${organizationId}`, { method: 'PATCH', body: { maxConcurrentCallsCap: 10 } });
      await tenant('/v1/organization', { method: 'PATCH', body: { maxConcurrentCalls: 8 } });
      await operator(`/v1/organizations/${organizationId}`, { method: 'PATCH', body: { maxConcurrentCallsCap: 2 } });
      const now = (await tenant('/v1/organization')).body;
      expect(now).toMatchObject({ maxConcurrentCalls: 8, maxConcurrentCallsCap: 2, effectiveMaxConcurrentCalls: 2 });
      await operator(`/v1/organizations/${organizationId}`, { method: 'PATCH', body: { maxConcurrentCallsCap: null } });
      expect((await tenant('/v1/organization')).body).toMatchObject({ maxConcurrentCallsCap: 1000, effectiveMaxConcurrentCalls: 8 });
    });
  });

  describe('price catalogs', () => {
    it("bills with the operator's prices; the tenant's own catalog is listed as its own and bills nothing", async () => {
      const own = await tenant('/v1/price-catalog', { method: 'POST', body: { prices: { telephonyInboundPerMinute: 1 } } });
      expect(own.status).toBe(201);
      expect(own.body).toMatchObject({ organizationId, setBy: 'organization', version: 1 });
      let catalogs = (await tenant('/v1/price-catalog')).body;
      expect(catalogs.inForce).toMatchObject({ organizationId: null, setBy: 'operator' });
      expect(catalogs.own.map((catalog: { id: string }) => catalog.id)).toEqual([own.body.id]);
      expect(catalogs.operator).toEqual([]);

      const billing = await operator(`/v1/organizations/${organizationId}/price-catalog`, { method: 'POST', body: { prices: { telephonyInboundPerMinute: 12_000 } } });
      expect(billing.status).toBe(201);
      expect(billing.body).toMatchObject({ organizationId, setBy: 'operator', version: 1, prices: { telephonyInboundPerMinute: 12_000 } });
      catalogs = (await tenant('/v1/price-catalog')).body;
      expect(catalogs.inForce.id).toBe(billing.body.id);
      expect(catalogs.operator.map((catalog: { id: string }) => catalog.id)).toEqual([billing.body.id]);
      // The tenant's key cannot set the operator's prices.
      expect((await tenant(`/v1/organizations/${organizationId}/price-catalog`, { method: 'POST', body: { prices: {} } })).status).toBe(401);
    });
  });

  describe('webhook replays', () => {
    it('are limited per organization per hour (429 with Retry-After); other organizations are not affected', async () => {
      const subscription = await tenant('/v1/webhook-subscriptions', { method: 'POST', body: { url: 'https://hooks.example.com/replays', events: ['call.ended'] } });
      expect(subscription.status).toBe(201);
      await server.app.get(PrismaService).$transaction((tx) => enqueueWebhookEvent(tx, { organizationId, type: 'call.ended', data: { callId: 'replayed' } }, { giveUpAfterMs: 60_000 }));
      const [delivery] = (await tenant('/v1/webhook-deliveries')).body.data;
      expect((await tenant(`/v1/webhook-deliveries/${delivery.id}/replay`, { method: 'POST' })).status).toBe(202);
      expect((await tenant(`/v1/webhook-deliveries/${delivery.id}/replay`, { method: 'POST' })).status).toBe(202);
      const third = await tenant(`/v1/webhook-deliveries/${delivery.id}/replay`, { method: 'POST' });
      expect(third.status).toBe(429);
      expect(third.body).toMatchObject({ code: 'rate_limited', message: expect.stringMatching(/more than 2 webhook replays in an hour/) });
      // Another organization's replays are counted on their own.
      const otherKey = await createOtherOrganizationKey(createRepositories(prisma), 'operator-limits-other');
      const otherId = (await server.api('/v1/organization', { apiKey: otherKey })).body.id;
      await server.api('/v1/webhook-subscriptions', { apiKey: otherKey, method: 'POST', body: { url: 'https://hooks.example.com/other', events: ['call.ended'] } });
      await server.app.get(PrismaService).$transaction((tx) => enqueueWebhookEvent(tx, { organizationId: otherId, type: 'call.ended', data: { callId: 'other' } }, { giveUpAfterMs: 60_000 }));
      const [otherDelivery] = (await server.api('/v1/webhook-deliveries', { apiKey: otherKey })).body.data;
      expect((await server.api(`/v1/webhook-deliveries/${otherDelivery.id}/replay`, { apiKey: otherKey, method: 'POST' })).status).toBe(202);
    });
  });
});
