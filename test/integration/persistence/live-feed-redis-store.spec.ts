import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import { RedisLiveFeedLeaseStore } from '../../../apps/server/src/calls/live-feed-leases/redis-live-feed-lease-store';

/** The machine's Redis; override with TEST_REDIS_URL. */
const REDIS_URL = process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';
const TTL_MS = 30_000;

describe('RedisLiveFeedLeaseStore (real Redis)', () => {
  // This run's leases only, so parallel runs and leftovers never mix in; deleted afterwards.
  const keyPrefix = `switchboard-test:${randomUUID()}:`;
  const logger = { warn: jest.fn() };
  // Two clients stand for two server processes.
  const storeA = new RedisLiveFeedLeaseStore({ url: REDIS_URL, keyPrefix }, logger);
  const storeB = new RedisLiveFeedLeaseStore({ url: REDIS_URL, keyPrefix }, logger);
  const admin = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });

  afterAll(async () => {
    const keys = await admin.keys(`${keyPrefix}*`);
    if (keys.length > 0) await admin.del(...keys);
    await Promise.all([storeA.onModuleDestroy(), storeB.onModuleDestroy()]);
    await admin.quit();
  });

  it('grants concurrent leases from two processes up to the cap, per organization', async () => {
    const organization = randomUUID();
    const taken = await Promise.all(Array.from({ length: 16 }, (_, i) => (i % 2 === 0 ? storeA : storeB).acquire(organization, randomUUID(), 10, TTL_MS)));
    expect(taken.filter(Boolean)).toHaveLength(10);
    await expect(storeB.acquire(randomUUID(), randomUUID(), 10, TTL_MS)).resolves.toBe(true);
  });

  it('frees a released lease at once and an expired one without anyone releasing it; an expired lease is not renewed', async () => {
    const organization = randomUUID();
    const held = randomUUID();
    expect(await storeA.acquire(organization, held, 2, TTL_MS)).toBe(true);
    // A lease left by a process that died: its expiry already passed.
    const orphan = randomUUID();
    await admin.zadd(`${keyPrefix}{${organization}}`, 1, orphan);
    expect(await storeB.acquire(organization, randomUUID(), 2, TTL_MS)).toBe(true);
    expect(await storeB.acquire(organization, randomUUID(), 2, TTL_MS)).toBe(false);
    await expect(storeA.renew(organization, orphan, TTL_MS)).resolves.toBe(false);
    await expect(storeA.renew(organization, held, TTL_MS)).resolves.toBe(true);
    await storeA.release(organization, held);
    expect(await storeB.acquire(organization, randomUUID(), 2, TTL_MS)).toBe(true);
    // The set expires with its leases, so a dead organization leaves nothing behind.
    expect(await admin.pttl(`${keyPrefix}{${organization}}`)).toBeGreaterThan(0);
  });
});
