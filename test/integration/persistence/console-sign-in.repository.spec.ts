import { ConsoleSignInRepository, FIRST_RUN_API_KEY_NAME } from '../../../libs/persistence/src/repositories/console-sign-in.repository';
import { hashSecret } from '../../../libs/persistence/src/secret-hash';
import { createRepositories, createTestOrganization, createTestPrisma } from '../../support/database';

describe('ConsoleSignInRepository (first-run links)', () => {
  const prisma = createTestPrisma();
  const repos = createRepositories(prisma);
  const links = new ConsoleSignInRepository(prisma);
  const key = (n: number) => ({ rawKey: `sk_live_test_${n}_${Math.random().toString(36).slice(2)}_padding`, prefix: 'sk_live_' });
  const inAnHour = () => new Date(Date.now() + 3_600_000);

  afterAll(() => prisma.$disconnect());

  it('stores only the token hash; a claim spends it and creates one admin key, even when claims race', async () => {
    const org = await createTestOrganization(repos);
    const token = `token-${Math.random()}-0123456789`;
    await links.replaceLink(org.id, token, inAnHour());
    const stored = await prisma.consoleSignInLink.findFirstOrThrow({ where: { organizationId: org.id } });
    expect(stored.tokenHash).toBe(hashSecret(token));
    expect(JSON.stringify(stored)).not.toContain(token);
    await expect(links.hasActiveAdminKey(org.id)).resolves.toBe(false);

    const keys = [1, 2, 3, 4].map(key);
    const outcomes = await Promise.all(keys.map((candidate) => links.claim(token, candidate)));
    const claimed = outcomes.filter((outcome) => typeof outcome !== 'string');
    expect(claimed).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome === 'used')).toHaveLength(3);

    const adminKeys = await prisma.apiKey.findMany({ where: { organizationId: org.id } });
    expect(adminKeys).toHaveLength(1);
    expect(adminKeys[0]).toMatchObject({ name: FIRST_RUN_API_KEY_NAME, scopes: ['admin'] });
    const winner = keys.find((candidate) => hashSecret(candidate.rawKey) === adminKeys[0]?.keyHash);
    expect(winner).toBeDefined();
    await expect(repos.apiKeys.findActiveByRawKey(winner!.rawKey)).resolves.toMatchObject({ organizationId: org.id, scopes: ['admin'] });
    await expect(links.hasActiveAdminKey(org.id)).resolves.toBe(true);
  });

  it('refuses an unknown, an expired and a replaced link, creating no key', async () => {
    const org = await createTestOrganization(repos);
    await expect(links.claim('never-issued-token-000000', key(1))).resolves.toBe('unknown');

    await links.replaceLink(org.id, 'expired-token-0000000000', new Date(Date.now() - 1));
    await expect(links.claim('expired-token-0000000000', key(2))).resolves.toBe('expired');

    await links.replaceLink(org.id, 'old-token-000000000000', inAnHour());
    await links.replaceLink(org.id, 'new-token-000000000000', inAnHour());
    await expect(links.claim('old-token-000000000000', key(3))).resolves.toBe('unknown');
    await expect(prisma.apiKey.count({ where: { organizationId: org.id } })).resolves.toBe(0);
    await expect(links.claim('new-token-000000000000', key(4))).resolves.toMatchObject({ organizationId: org.id });
  });

  it('counts only admin keys that still authenticate', async () => {
    const org = await createTestOrganization(repos);
    await repos.apiKeys.create({ organizationId: org.id, name: 'reader', rawKey: 'sk_live_reader_0000000000', prefix: 'sk_live_', scopes: ['read'] });
    await expect(links.hasActiveAdminKey(org.id)).resolves.toBe(false);
    const admin = await repos.apiKeys.create({ organizationId: org.id, name: 'admin', rawKey: 'sk_live_admin_00000000000', prefix: 'sk_live_', scopes: ['admin'] });
    await expect(links.hasActiveAdminKey(org.id)).resolves.toBe(true);
    await repos.apiKeys.revoke(org.id, admin.id);
    await expect(links.hasActiveAdminKey(org.id)).resolves.toBe(false);
  });
});
