import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { uniqueE164 } from '../support/database';
import { openApiContract } from '../support/openapi-contract';
import { startTestServer, type TestServer } from '../support/test-server';

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
    const check = async (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, template: string, body?: unknown, expected?: number) => {
      const response = await server.api(path, { method, body });
      if (expected !== undefined) expect(response.status).toBe(expected);
      contract.assertResponse(method, template, response.status, response.body);
      return response.body;
    };
    const agent = await check('POST', '/v1/agents', '/v1/agents', { name: 'Contract', engine: 'pipeline' }, 201);
    await check('GET', '/v1/agents?limit=2', '/v1/agents', undefined, 200);
    await check('GET', `/v1/agents/${agent.id}`, '/v1/agents/{id}', undefined, 200);
    await check('PATCH', `/v1/agents/${agent.id}`, '/v1/agents/{id}', { config: { systemPrompt: 'v2' } }, 200);
    await check('GET', `/v1/agents/${agent.id}/versions/1`, '/v1/agents/{id}/versions/{version}', undefined, 200);
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
});
