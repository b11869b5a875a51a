import { randomBytes, randomUUID } from 'node:crypto';
import { Prisma } from '../../../libs/persistence/src/generated/prisma/client';
import { LiveFeedLeaseRepository } from '../../../libs/persistence/src/repositories/live-feed-lease.repository';
import { createRepositories, createTestOrganization, createTestPrisma } from '../../support/database';

const TTL_MS = 30_000;

function newKey(organizationId: string, name: string) {
  const rawKey = `sk_test_${randomBytes(20).toString('hex')}`;
  return { organizationId, name, rawKey, prefix: rawKey.slice(0, 12), scopes: ['read' as const] };
}

describe('Per-organization caps counted in the database, shared by every process', () => {
  // Two pools stand for two server processes sharing the database.
  const prismaA = createTestPrisma(5);
  const prismaB = createTestPrisma(5);
  const repositoriesA = createRepositories(prismaA);
  const repositoriesB = createRepositories(prismaB);
  const leasesA = new LiveFeedLeaseRepository(prismaA);
  const leasesB = new LiveFeedLeaseRepository(prismaB);

  afterAll(() => Promise.all([prismaA.$disconnect(), prismaB.$disconnect()]));

  it('lets exactly one of concurrent mints from two processes take the last place of the API key cap', async () => {
    const organization = await createTestOrganization(repositoriesA, 'key-cap');
    const max = 5;
    for (let i = 0; i < max - 1; i++) await expect(repositoriesA.apiKeys.createWithinLimit(newKey(organization.id, `k${i}`), max)).resolves.toMatchObject({ created: true });
    const racing = await Promise.all(
      Array.from({ length: 6 }, (_, i) => (i % 2 === 0 ? repositoriesA : repositoriesB).apiKeys.createWithinLimit(newKey(organization.id, `race${i}`), max)),
    );
    expect(racing.filter((result) => result.created)).toHaveLength(1);
    expect(racing.filter((result) => !result.created)).toEqual(Array.from({ length: 5 }, () => ({ created: false, active: max })));

    // Revoked keys do not count.
    const keys = await repositoriesA.apiKeys.list(organization.id);
    await repositoriesA.apiKeys.revoke(organization.id, keys[0]!.id);
    await expect(repositoriesB.apiKeys.createWithinLimit(newKey(organization.id, 'after-revoke'), max)).resolves.toMatchObject({ created: true });
  });

  it('grants concurrent live feed leases from two processes up to the cap and no further', async () => {
    const organization = await createTestOrganization(repositoriesA, 'feed-leases');
    const other = await createTestOrganization(repositoriesA, 'feed-leases-other');
    const taken = await Promise.all(Array.from({ length: 16 }, (_, i) => (i % 2 === 0 ? leasesA : leasesB).acquire(organization.id, randomUUID(), 10, TTL_MS)));
    expect(taken.filter(Boolean)).toHaveLength(10);
    await expect(leasesA.countActive(organization.id)).resolves.toBe(10);
    // Another organization's cap is its own.
    await expect(leasesB.acquire(other.id, randomUUID(), 10, TTL_MS)).resolves.toBe(true);
  });

  it('frees a released lease at once and an expired one (a process that died) without anyone releasing it', async () => {
    const organization = await createTestOrganization(repositoriesA, 'feed-expiry');
    const held = randomUUID();
    expect(await leasesA.acquire(organization.id, held, 2, TTL_MS)).toBe(true);
    // A lease left by a process that died: its expiry already passed.
    const orphan = randomUUID();
    await prismaA.$executeRaw(Prisma.sql`
      INSERT INTO live_feed_leases (id, organization_id, expires_at) VALUES (${orphan}::uuid, ${organization.id}::uuid, now() - interval '1 second')`);
    const second = randomUUID();
    expect(await leasesB.acquire(organization.id, second, 2, TTL_MS)).toBe(true);
    expect(await leasesB.acquire(organization.id, randomUUID(), 2, TTL_MS)).toBe(false);
    // The expired lease was deleted on the way, and cannot be renewed back to life.
    await expect(leasesA.renew(organization.id, orphan, TTL_MS)).resolves.toBe(false);
    await expect(leasesA.renew(organization.id, held, TTL_MS)).resolves.toBe(true);

    await leasesA.release(organization.id, held);
    await expect(leasesA.countActive(organization.id)).resolves.toBe(1);
    expect(await leasesB.acquire(organization.id, randomUUID(), 2, TTL_MS)).toBe(true);
  });

  it('renews a lease for the TTL from now, as the database clock counts', async () => {
    const organization = await createTestOrganization(repositoriesA, 'feed-renew');
    const lease = randomUUID();
    await leasesA.acquire(organization.id, lease, 1, 1_000);
    await leasesA.renew(organization.id, lease, TTL_MS);
    const [row] = await prismaA.$queryRaw<Array<{ left_ms: number }>>(Prisma.sql`
      SELECT extract(epoch FROM expires_at - now()) * 1000 AS left_ms FROM live_feed_leases WHERE id = ${lease}::uuid`);
    expect(Number(row?.left_ms)).toBeGreaterThan(TTL_MS - 5_000);
    expect(Number(row?.left_ms)).toBeLessThanOrEqual(TTL_MS);
  });
});
