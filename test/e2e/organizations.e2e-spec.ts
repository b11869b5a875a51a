import { randomBytes } from 'node:crypto';
import { hashSecret } from '@switchboard/persistence';
import { createTestPrisma } from '../support/database';
import { openApiContract } from '../support/openapi-contract';
import { startTestServer, type TestServer } from '../support/test-server';
import type { PrismaService } from '../../libs/persistence/src/prisma.service';

const OPERATOR_KEY = `op_test_${randomBytes(24).toString('hex')}`;

/** Organizations are created by the deployment operator (OPERATOR_API_KEY), each with its first admin key. */
describe('Organizations API, operator only (e2e)', () => {
  let server: TestServer;
  let closedServer: TestServer;
  let prisma: PrismaService;
  let contract: ReturnType<typeof openApiContract>;

  beforeAll(async () => {
    [server, closedServer] = await Promise.all([startTestServer({ OPERATOR_API_KEY: OPERATOR_KEY }), startTestServer()]);
    prisma = createTestPrisma(2);
    contract = openApiContract(await (await fetch(`${server.serverUrl}/docs/openapi.json`)).json());
  });
  afterAll(async () => {
    await Promise.all([server?.close(), closedServer?.close()]);
    await prisma?.$disconnect();
  });

  const operator = (method: 'GET' | 'POST', body?: unknown, apiKey: string | null = OPERATOR_KEY, target = server) =>
    target.api('/v1/organizations', { method, body, apiKey });
  const uniqueName = (label: string) => `${label} ${randomBytes(4).toString('hex')}`;

  it('creates an organization with an admin key shown once; the new tenant works and is isolated', async () => {
    const name = uniqueName('Acme Plumbing');
    const created = await operator('POST', { name: `  ${name}  `, maxConcurrentCalls: 3 });
    expect(created.status).toBe(201);
    contract.assertResponse('POST', '/v1/organizations', 201, created.body);
    expect(created.body).toMatchObject({ name, maxConcurrentCalls: 3, adminKey: { name: 'first-admin', scopes: ['admin'] } });
    const key: string = created.body.adminKey.key;
    expect(key.startsWith(created.body.adminKey.prefix)).toBe(true);

    // Stored hashed, in the new organization.
    const row = await prisma.apiKey.findUniqueOrThrow({ where: { id: created.body.adminKey.id } });
    expect(row).toMatchObject({ organizationId: created.body.id, keyHash: hashSecret(key), scopes: ['admin'], revokedAt: null });
    expect(Object.values(row)).not.toContain(key);

    // The key administers its own organization...
    const own = await server.api('/v1/organization', { apiKey: key });
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({ id: created.body.id, name, maxConcurrentCalls: 3, effectiveMaxConcurrentCalls: 3, activeCalls: 0 });
    const agent = await server.api('/v1/agents', { apiKey: key, method: 'POST', body: { name: 'Front desk', engine: 'pipeline' } });
    expect(agent.status).toBe(201);
    const readKey = await server.api('/v1/api-keys', { apiKey: key, method: 'POST', body: { name: 'dashboard', scopes: ['read'] } });
    expect(readKey.status).toBe(201);

    // ...and neither side sees the other's data.
    expect((await server.api(`/v1/agents/${agent.body.id}`)).status).toBe(404);
    const defaultAgents = await server.api('/v1/agents?limit=100');
    expect(defaultAgents.body.data.map((entry: { id: string }) => entry.id)).not.toContain(agent.body.id);
    const ownAgents = await server.api('/v1/agents', { apiKey: key });
    expect(ownAgents.body.data.map((entry: { id: string }) => entry.id)).toEqual([agent.body.id]);

    // The listing shows it, never with a key.
    const listed = await operator('GET');
    expect(listed.status).toBe(200);
    contract.assertResponse('GET', '/v1/organizations', 200, listed.body);
    // No cap of its own: MAX_CONCURRENT_CALLS_CAP applies (the operator sets one with PATCH /v1/organizations/:id).
    expect(listed.body.data).toContainEqual({ id: created.body.id, name, createdAt: created.body.createdAt, maxConcurrentCalls: 3, maxConcurrentCallsCap: null });
    expect(JSON.stringify(listed.body)).not.toContain(key);
  });

  it('defaults the concurrency limit to the deployment default', async () => {
    const created = await operator('POST', { name: uniqueName('Defaults') });
    expect(created.status).toBe(201);
    expect(created.body.maxConcurrentCalls).toBeNull();
    const own = await server.api('/v1/organization', { apiKey: created.body.adminKey.key });
    expect(own.body).toMatchObject({ maxConcurrentCalls: null, effectiveMaxConcurrentCalls: 1000 });
  });

  it('refuses a taken name (409) and invalid bodies (400 naming the field), creating nothing', async () => {
    const name = uniqueName('Taken');
    expect((await operator('POST', { name })).status).toBe(201);
    const duplicate = await operator('POST', { name });
    expect(duplicate.status).toBe(409);
    contract.assertResponse('POST', '/v1/organizations', 409, duplicate.body);
    expect(duplicate.body).toMatchObject({ code: 'conflict', message: expect.stringContaining(name) });
    expect(await prisma.organization.count({ where: { name } })).toBe(1);

    for (const [body, field] of [
      [{ name: '   ' }, 'name'],
      [{}, 'name'],
      [{ name: 'x', maxConcurrentCalls: -1 }, 'maxConcurrentCalls'],
      [{ name: 'x', maxConcurrentCalls: 1.5 }, 'maxConcurrentCalls'],
      [{ name: 'x', plan: 'gold' }, ''],
    ] as const) {
      const refused = await operator('POST', body);
      expect(refused.status).toBe(400);
      contract.assertResponse('POST', '/v1/organizations', 400, refused.body);
      expect(refused.body.code).toBe('validation_failed');
      if (field) expect(refused.body.details.map((detail: { field: string }) => detail.field)).toContain(field);
    }
    expect(await prisma.organization.count({ where: { name: 'x' } })).toBe(0);
  });

  it('answers 401 to anyone but the operator, including an organization admin key', async () => {
    const before = await prisma.organization.count();
    for (const apiKey of [null, server.adminApiKey, `${OPERATOR_KEY}x`, 'Bearer']) {
      const answer = await operator('POST', { name: uniqueName('Intruder') }, apiKey);
      expect(answer.status).toBe(401);
      contract.assertResponse('POST', '/v1/organizations', 401, answer.body);
      expect((await operator('GET', undefined, apiKey)).status).toBe(401);
    }
    expect((await operator('POST', { name: uniqueName('Intruder') }, server.adminApiKey)).body.code).toBe('invalid_operator_key');
    expect((await operator('POST', { name: uniqueName('Intruder') }, null)).body.code).toBe('missing_api_key');
    expect(await prisma.organization.count()).toBe(before);
  });

  it('is closed when the server has no OPERATOR_API_KEY', async () => {
    const answer = await operator('POST', { name: uniqueName('Closed') }, OPERATOR_KEY, closedServer);
    expect(answer.status).toBe(401);
    expect(answer.body.code).toBe('operator_api_disabled');
    expect((await operator('GET', undefined, OPERATOR_KEY, closedServer)).status).toBe(401);
  });
});
