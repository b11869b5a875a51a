import { randomUUID } from 'node:crypto';
import { hashSecret } from '@switchboard/persistence';
import { createOtherOrganizationKey, createRepositories, createTestPrisma } from '../support/database';
import { startTestServer, type TestServer } from '../support/test-server';
import type { PrismaService } from '../../libs/persistence/src/prisma.service';

describe('API keys API (e2e)', () => {
  let server: TestServer;
  let prisma: PrismaService;
  /** The bootstrap admin key of a second organization. */
  let otherOrgKey: string;

  beforeAll(async () => {
    server = await startTestServer();
    prisma = createTestPrisma(2);
    const repositories = createRepositories(prisma);
    otherOrgKey = await createOtherOrganizationKey(repositories, 'api-keys-other');
  });
  afterAll(async () => {
    await server?.close();
    await prisma?.$disconnect();
  });

  const createKey = (body: unknown, apiKey?: string) => server.api('/v1/api-keys', { method: 'POST', body, apiKey });
  const listKeys = async (apiKey?: string) => {
    const listed = await server.api('/v1/api-keys', { apiKey });
    expect(listed.status).toBe(200);
    return listed.body.data as Array<Record<string, unknown>>;
  };

  it('creates a read key, shows it once, stores only its hash, and limits it to reads', async () => {
    const created = await createKey({ name: 'dashboard', scopes: ['read'] });
    expect(created.status).toBe(201);
    const { key, ...shown } = created.body;
    expect(key).toMatch(/^sk_live_[A-Za-z0-9_-]{40,}$/);
    expect(shown).toEqual({
      id: expect.any(String),
      name: 'dashboard',
      prefix: key.slice(0, shown.prefix.length),
      scopes: ['read'],
      createdAt: expect.any(String),
      lastUsedAt: null,
      revokedAt: null,
    });
    expect(shown.prefix.length).toBeGreaterThan('sk_live_'.length);
    expect(shown.prefix.length).toBeLessThan(key.length / 2);

    // Stored as sha256 only: nothing in the row is the raw key.
    const row = await prisma.apiKey.findUniqueOrThrow({ where: { id: shown.id } });
    expect(row.keyHash).toBe(hashSecret(key));
    expect(Object.values(row)).not.toContain(key);

    // The listing never repeats the raw key or its hash.
    const listed = await listKeys();
    const entry = listed.find((candidate) => candidate['id'] === shown.id);
    expect(entry).toEqual({ ...shown, lastUsedAt: null });
    expect(JSON.stringify(listed)).not.toContain(key);
    expect(JSON.stringify(listed)).not.toContain(row.keyHash);

    const read = await server.api('/v1/agents', { apiKey: key });
    expect(read.status).toBe(200);
    expect((await server.api('/v1/phone-numbers', { apiKey: key })).status).toBe(200);
    expect((await server.api('/v1/calls', { apiKey: key })).status).toBe(200);

    const write = await server.api('/v1/agents', { apiKey: key, method: 'POST', body: { name: 'nope', engine: 'echo' } });
    expect(write.status).toBe(403);
    expect(write.body).toMatchObject({ code: 'insufficient_scope', requiredScope: 'admin' });
    const patch = await server.api(`/v1/phone-numbers/${randomUUID()}`, { apiKey: key, method: 'PATCH', body: {} });
    expect(patch.status).toBe(403);
    expect(patch.body.code).toBe('insufficient_scope');
    // A read key may see the key listing (no secrets in it) but must not mint or revoke keys.
    expect((await listKeys(key)).map((candidate) => candidate['id'])).toContain(shown.id);
    const escalate = await createKey({ name: 'escalate', scopes: ['admin'] }, key);
    expect(escalate.status).toBe(403);
    expect(escalate.body.code).toBe('insufficient_scope');
    expect((await server.api(`/v1/api-keys/${shown.id}`, { apiKey: key, method: 'DELETE' })).status).toBe(403);

    // The guard records use synchronously before answering, so the next listing shows it.
    const afterUse = (await listKeys()).find((candidate) => candidate['id'] === shown.id);
    expect(afterUse?.['lastUsedAt']).toEqual(expect.any(String));
    expect(Date.parse(afterUse?.['lastUsedAt'] as string)).toBeGreaterThanOrEqual(Date.parse(shown.createdAt));
  });

  it('gives a created admin key write access', async () => {
    const created = await createKey({ name: 'deployer', scopes: ['admin'] });
    expect(created.status).toBe(201);
    const agent = await server.api('/v1/agents', { apiKey: created.body.key, method: 'POST', body: { name: 'by deployer', engine: 'echo' } });
    expect(agent.status).toBe(201);
    expect((await server.api(`/v1/agents/${agent.body.id}`, { apiKey: created.body.key, method: 'DELETE' })).status).toBe(204);
  });

  it('revokes a key: it then gets 401 and the listing shows when', async () => {
    const created = await createKey({ name: 'short-lived', scopes: ['read'] });
    const key = created.body.key as string;
    expect((await server.api('/v1/agents', { apiKey: key })).status).toBe(200);

    const revoked = await server.api(`/v1/api-keys/${created.body.id}`, { method: 'DELETE' });
    expect(revoked.status).toBe(204);
    expect(revoked.body).toBeUndefined();

    const rejected = await server.api('/v1/agents', { apiKey: key });
    expect(rejected.status).toBe(401);
    expect(rejected.body.code).toBe('invalid_api_key');
    const entry = (await listKeys()).find((candidate) => candidate['id'] === created.body.id);
    expect(entry?.['revokedAt']).toEqual(expect.any(String));
    // Revoking again is idempotent and keeps the first revocation time.
    expect((await server.api(`/v1/api-keys/${created.body.id}`, { method: 'DELETE' })).status).toBe(204);
    expect((await listKeys()).find((candidate) => candidate['id'] === created.body.id)?.['revokedAt']).toBe(entry?.['revokedAt']);
  });

  it('lets a key revoke itself', async () => {
    const created = await createKey({ name: 'self-destruct', scopes: ['admin'] });
    const key = created.body.key as string;
    expect((await server.api(`/v1/api-keys/${created.body.id}`, { apiKey: key, method: 'DELETE' })).status).toBe(204);
    expect((await server.api('/v1/api-keys', { apiKey: key })).status).toBe(401);
  });

  it("never shows or revokes another organization's keys (404, not 403)", async () => {
    const foreign = await createKey({ name: 'other org key', scopes: ['read'] }, otherOrgKey);
    expect(foreign.status).toBe(201);

    expect((await listKeys()).map((candidate) => candidate['id'])).not.toContain(foreign.body.id);
    const attempt = await server.api(`/v1/api-keys/${foreign.body.id}`, { method: 'DELETE' });
    expect(attempt.status).toBe(404);
    expect(attempt.body.code).toBe('api_key_not_found');
    // Untouched: it still works for its own organization.
    expect((await server.api('/v1/agents', { apiKey: foreign.body.key })).status).toBe(200);
    expect((await server.api(`/v1/api-keys/${randomUUID()}`, { method: 'DELETE' })).status).toBe(404);
    expect((await server.api('/v1/api-keys/not-a-uuid', { method: 'DELETE' })).status).toBe(404);
  });

  it.each([
    ['an unknown scope', { name: 'k', scopes: ['write'] }],
    ['no scopes', { name: 'k', scopes: [] }],
    ['missing scopes', { name: 'k' }],
    ['a repeated scope', { name: 'k', scopes: ['read', 'read'] }],
    ['scopes as a string', { name: 'k', scopes: 'admin' }],
    ['an empty name', { name: '  ', scopes: ['read'] }],
    ['the reserved bootstrap name', { name: 'bootstrap-admin', scopes: ['read'] }],
    ['an unknown field', { name: 'k', scopes: ['read'], key: 'sk_live_chosen' }],
  ])('rejects %s with 400 and creates nothing', async (_label, body) => {
    // Counted within the admin key's organization: other test files create keys in parallel.
    const { organizationId } = await prisma.apiKey.findUniqueOrThrow({ where: { keyHash: hashSecret(server.adminApiKey) } });
    const before = await prisma.apiKey.count({ where: { organizationId } });
    const response = await createKey(body);
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('validation_failed');
    expect(response.body).not.toHaveProperty('key');
    expect(await prisma.apiKey.count({ where: { organizationId } })).toBe(before);
  });

  it('answers 401 without a key', async () => {
    const response = await server.api('/v1/api-keys', { apiKey: null });
    expect(response.status).toBe(401);
    expect(response.body.code).toBe('missing_api_key');
  });
});
