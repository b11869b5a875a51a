import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createOtherOrganizationKey, createRepositories, createTestPrisma, uniqueE164 } from '../support/database';
import { openApiContract } from '../support/openapi-contract';
import { eventually, startTestServer, type TestServer } from '../support/test-server';

/**
 * The OpenAPI document as served, and real responses checked against it: a route whose answer
 * drifts from its documentation fails here.
 */
describe('OpenAPI document and contract (e2e)', () => {
  let server: TestServer;
  let contract: ReturnType<typeof openApiContract>;

  beforeAll(async () => {
    server = await startTestServer();
    const served = await fetch(`${server.serverUrl}/docs/openapi.json`);
    contract = openApiContract(await served.json());
  });
  afterAll(async () => {
    await server?.close();
  });

  const check = async (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, template: string, body?: unknown, expected?: number, apiKey?: string) => {
    const response = await server.api(path, { method, body, apiKey });
    if (expected !== undefined) expect(response.status).toBe(expected);
    contract.assertResponse(method, template, response.status, response.body);
    return response.body;
  };

  it('serves the committed document at /docs/openapi.json and a UI at /docs', async () => {
    const served = await (await fetch(`${server.serverUrl}/docs/openapi.json`)).json();
    const committed = JSON.parse(readFileSync(join(__dirname, '../../docs/openapi.json'), 'utf8'));
    expect(served).toEqual(committed);
    const ui = await fetch(`${server.serverUrl}/docs`);
    expect(ui.status).toBe(200);
    expect(ui.headers.get('content-type')).toMatch(/text\/html/);
    expect(await ui.text()).toContain('swagger');
  });

  it('agents, phone numbers and API keys answer what the document says', async () => {
    const agent = await check('POST', '/v1/agents', '/v1/agents', { name: 'Contract', engine: 'pipeline' }, 201);
    await check('GET', '/v1/agents?limit=2', '/v1/agents', undefined, 200);
    await check('GET', `/v1/agents/${agent.id}`, '/v1/agents/{id}', undefined, 200);
    await check('PATCH', `/v1/agents/${agent.id}`, '/v1/agents/{id}', { config: { systemPrompt: 'v2' } }, 200);
    await check('GET', `/v1/agents/${agent.id}/versions/1`, '/v1/agents/{id}/versions/{version}', undefined, 200);
    await check('GET', '/v1/agents/config-schema', '/v1/agents/config-schema', undefined, 200);
    await check('POST', '/v1/agents', '/v1/agents', { name: '', engine: 'telepathy' }, 400);
    await check('GET', '/v1/agents/00000000-0000-4000-8000-000000000000', '/v1/agents/{id}', undefined, 404);

    const number = await check('POST', '/v1/phone-numbers', '/v1/phone-numbers', { e164: uniqueE164(), agentId: agent.id }, 201);
    await check('GET', '/v1/phone-numbers', '/v1/phone-numbers', undefined, 200);
    await check('PATCH', `/v1/phone-numbers/${number.id}`, '/v1/phone-numbers/{id}', { agentId: null }, 200);
    await check('DELETE', `/v1/phone-numbers/${number.id}`, '/v1/phone-numbers/{id}', undefined, 204);

    const key = await check('POST', '/v1/api-keys', '/v1/api-keys', { name: 'contract', scopes: ['read'] }, 201);
    await check('GET', '/v1/api-keys', '/v1/api-keys', undefined, 200);
    await check('DELETE', `/v1/api-keys/${key.id}`, '/v1/api-keys/{id}', undefined, 204);
    await check('DELETE', `/v1/agents/${agent.id}`, '/v1/agents/{id}', undefined, 204);

    const unauthorised = await server.api('/v1/agents', { apiKey: null });
    contract.assertResponse('GET', '/v1/agents', 401, unauthorised.body);
  });

  it('calls and the organization answer what the document says', async () => {
    const call = await server.callEcho({ audio: new Uint8Array(8000).fill(0xff) });
    expect(call.protocolErrors).toEqual([]);
    // This spec's own call: other spec files place calls in the same organization at the same time
    // (some never priced, such as a call refused before it was answered).
    const page = await check('GET', '/v1/calls?limit=100', '/v1/calls', undefined, 200);
    const id = (page.data as { id: string; twilioCallSid: string | null }[]).find((listed) => listed.twilioCallSid === call.callSid)?.id;
    if (id === undefined) throw new Error(`the echo call ${call.callSid} is not among the newest 100 calls`);
    await check('GET', `/v1/calls/${id}`, '/v1/calls/{id}', undefined, 200);
    await check('GET', '/v1/calls?status=telepathic', '/v1/calls', undefined, 400);
    await check('POST', '/v1/calls', '/v1/calls', { to: 'tomorrow' }, 400);
    await check('POST', '/v1/calls/00000000-0000-4000-8000-000000000000/hangup', '/v1/calls/{id}/hangup', undefined, 404);
    const cost = await eventually(() => server.api(`/v1/calls/${id}/cost`), (answer) => answer.body?.status === 'priced');
    contract.assertResponse('GET', '/v1/calls/{id}/cost', 200, cost.body);
    await check('GET', `/v1/calls/${id}`, '/v1/calls/{id}', undefined, 200);
    await check('GET', '/v1/calls/00000000-0000-4000-8000-000000000000/cost', '/v1/calls/{id}/cost', undefined, 404);
    for (const groupBy of ['agent', 'day', 'component']) await check('GET', `/v1/usage?groupBy=${groupBy}`, '/v1/usage', undefined, 200);
    await check('GET', '/v1/usage?groupBy=weekday', '/v1/usage', undefined, 400);
    await check('GET', '/v1/price-catalog', '/v1/price-catalog', undefined, 200);

    const prisma = createTestPrisma(1);
    try {
      const otherKey = await createOtherOrganizationKey(createRepositories(prisma), 'openapi-contract');
      await check('GET', '/v1/organization', '/v1/organization', undefined, 200, otherKey);
      await check('PATCH', '/v1/organization', '/v1/organization', { maxConcurrentCalls: 3 }, 200, otherKey);
      await check('PATCH', '/v1/organization', '/v1/organization', { maxConcurrentCalls: -1 }, 400, otherKey);
      await check('PATCH', '/v1/organization', '/v1/organization', { monthlyBudgetMicros: 25_000_000, budgetHardLimit: false }, 200, otherKey);
      await check('PATCH', '/v1/organization', '/v1/organization', {}, 400, otherKey);
      await check('POST', '/v1/price-catalog', '/v1/price-catalog', { prices: { telephonyInboundPerMinute: 9_000 } }, 201, otherKey);
      await check('POST', '/v1/price-catalog', '/v1/price-catalog', { prices: { telephonyInboundPerMinute: -1 } }, 400, otherKey);
      await check('GET', '/v1/price-catalog', '/v1/price-catalog', undefined, 200, otherKey);
      const subscription = await check('POST', '/v1/webhook-subscriptions', '/v1/webhook-subscriptions', { url: 'https://hooks.example.com/x', events: ['call.ended'] }, 201, otherKey);
      await check('GET', '/v1/webhook-subscriptions', '/v1/webhook-subscriptions', undefined, 200, otherKey);
      await check('GET', `/v1/webhook-subscriptions/${subscription.id}`, '/v1/webhook-subscriptions/{id}', undefined, 200, otherKey);
      await check('POST', '/v1/webhook-subscriptions', '/v1/webhook-subscriptions', { url: 'ftp://x', events: [] }, 400, otherKey);
      await check('GET', '/v1/webhook-deliveries', '/v1/webhook-deliveries', undefined, 200, otherKey);
      await check('POST', `/v1/webhook-deliveries/${subscription.id}/replay`, '/v1/webhook-deliveries/{id}/replay', undefined, 404, otherKey);
      await check('DELETE', `/v1/webhook-subscriptions/${subscription.id}`, '/v1/webhook-subscriptions/{id}', undefined, 204, otherKey);
    } finally {
      await prisma.$disconnect();
    }
  });
});
