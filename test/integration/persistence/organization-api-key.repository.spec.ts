import { hashSecret } from '../../../libs/persistence/src/secret-hash';
import { PersistenceError } from '../../../libs/persistence/src/persistence.errors';
import { BOOTSTRAP_API_KEY_NAME } from '../../../libs/persistence/src/repositories/api-key.repository';
import { createRepositories, createTestOrganization, createTestPrisma } from '../../support/database';

describe('OrganizationRepository and ApiKeyRepository', () => {
  const prisma = createTestPrisma();
  const repos = createRepositories(prisma);

  afterAll(() => prisma.$disconnect());

  it('ensure() creates an organization once and returns the same row afterwards, concurrently too', async () => {
    const name = `org-${Date.now()}-${Math.random()}`;
    const results = await Promise.all([1, 2, 3, 4].map(() => repos.organizations.ensure(name)));
    const ids = new Set(results.map((org) => org.id));
    expect(ids.size).toBe(1);
    expect(results[0]?.name).toBe(name);
    expect(results[0]?.createdAt).toBeInstanceOf(Date);
    await expect(repos.organizations.findById(results[0]!.id)).resolves.toMatchObject({ name });
  });

  it('ensure() refuses an empty name; findById() answers null for unknown or malformed ids', async () => {
    await expect(repos.organizations.ensure('  ')).rejects.toMatchObject({ code: 'invalid_input' });
    await expect(repos.organizations.findById('00000000-0000-4000-8000-000000000000')).resolves.toBeNull();
    await expect(repos.organizations.findById('not-a-uuid')).resolves.toBeNull();
  });

  it('upsertBootstrapKey() stores only the sha256 hash and authenticates the raw key', async () => {
    const org = await createTestOrganization(repos);
    const rawKey = `sk_test_${Math.random().toString(36).slice(2)}${Date.now()}`;
    const result = await repos.apiKeys.upsertBootstrapKey(org.id, rawKey);
    expect(result).toMatchObject({ created: true, revoked: false });

    const stored = await prisma.apiKey.findUniqueOrThrow({ where: { id: result.id } });
    expect(stored.keyHash).toBe(hashSecret(rawKey));
    expect(stored.keyHash).toMatch(/^[0-9a-f]{64}$/);
    expect(stored.prefix).toBe(rawKey.slice(0, 8));
    expect(JSON.stringify(stored)).not.toContain(rawKey);
    expect(stored.scopes).toEqual(['admin']);
    expect(stored.name).toBe(BOOTSTRAP_API_KEY_NAME);

    await expect(repos.apiKeys.findActiveByRawKey(rawKey)).resolves.toEqual({
      id: result.id,
      organizationId: org.id,
      scopes: ['admin'],
    });
    await expect(repos.apiKeys.findActiveByRawKey(`${rawKey}x`)).resolves.toBeNull();
    await expect(repos.apiKeys.findActiveByRawKey('')).resolves.toBeNull();
  });

  it('upsertBootstrapKey() is idempotent and rotating the key revokes the previous one', async () => {
    const org = await createTestOrganization(repos);
    const first = await repos.apiKeys.upsertBootstrapKey(org.id, `first-key-${org.id}`);
    const again = await repos.apiKeys.upsertBootstrapKey(org.id, `first-key-${org.id}`);
    expect(again).toEqual({ id: first.id, created: false, revoked: false });

    const rotated = await repos.apiKeys.upsertBootstrapKey(org.id, `second-key-${org.id}`);
    expect(rotated.created).toBe(true);
    await expect(repos.apiKeys.findActiveByRawKey(`first-key-${org.id}`)).resolves.toBeNull();
    await expect(repos.apiKeys.findActiveByRawKey(`second-key-${org.id}`)).resolves.toMatchObject({ id: rotated.id });
    expect(await prisma.apiKey.count({ where: { organizationId: org.id } })).toBe(2);
  });

  it('upsertBootstrapKey() from replicas booting at once yields exactly one key', async () => {
    const org = await createTestOrganization(repos);
    const rawKey = `race-key-${org.id}`;
    const results = await Promise.all([1, 2, 3].map(() => repos.apiKeys.upsertBootstrapKey(org.id, rawKey)));
    expect(new Set(results.map((r) => r.id)).size).toBe(1);
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(await prisma.apiKey.count({ where: { organizationId: org.id } })).toBe(1);
  });

  it('a revoked bootstrap key is not revived by a restart', async () => {
    const org = await createTestOrganization(repos);
    const rawKey = `revoked-key-${org.id}`;
    const { id } = await repos.apiKeys.upsertBootstrapKey(org.id, rawKey);
    await prisma.apiKey.update({ where: { id }, data: { revokedAt: new Date() } });

    await expect(repos.apiKeys.upsertBootstrapKey(org.id, rawKey)).resolves.toEqual({ id, created: false, revoked: true });
    await expect(repos.apiKeys.findActiveByRawKey(rawKey)).resolves.toBeNull();
  });

  it('refuses to register one raw key for two organizations', async () => {
    const a = await createTestOrganization(repos);
    const b = await createTestOrganization(repos);
    const rawKey = `shared-key-${a.id}`;
    await repos.apiKeys.upsertBootstrapKey(a.id, rawKey);
    const error = await repos.apiKeys.upsertBootstrapKey(b.id, rawKey).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PersistenceError);
    expect(error).toMatchObject({ code: 'conflict', retryable: false });
    await expect(repos.apiKeys.upsertBootstrapKey(a.id, '')).rejects.toMatchObject({ code: 'invalid_input' });
  });

  it('touchLastUsed() records use but writes at most once a minute', async () => {
    const org = await createTestOrganization(repos);
    const { id } = await repos.apiKeys.upsertBootstrapKey(org.id, `touch-key-${org.id}`);
    const t0 = new Date('2030-01-01T00:00:00.000Z');
    await repos.apiKeys.touchLastUsed(id, t0);
    await repos.apiKeys.touchLastUsed(id, new Date(t0.getTime() + 30_000));
    expect((await prisma.apiKey.findUniqueOrThrow({ where: { id } })).lastUsedAt).toEqual(t0);
    const later = new Date(t0.getTime() + 61_000);
    await repos.apiKeys.touchLastUsed(id, later);
    expect((await prisma.apiKey.findUniqueOrThrow({ where: { id } })).lastUsedAt).toEqual(later);
    await expect(repos.apiKeys.touchLastUsed('nope')).resolves.toBeUndefined();
  });
});
