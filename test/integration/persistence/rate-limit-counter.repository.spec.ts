import { randomUUID } from 'node:crypto';
import { RateLimitCounterRepository } from '../../../libs/persistence/src/repositories/rate-limit-counter.repository';
import { createTestPrisma } from '../../support/database';

const WINDOW_MS = 60_000;

describe('RateLimitCounterRepository', () => {
  // Two pools stand for two server processes sharing the database.
  const prismaA = createTestPrisma(10);
  const prismaB = createTestPrisma(10);
  const countersA = new RateLimitCounterRepository(prismaA);
  const countersB = new RateLimitCounterRepository(prismaB);

  afterAll(() => Promise.all([prismaA.$disconnect(), prismaB.$disconnect()]));

  const uniqueKey = () => `test:${randomUUID()}`;
  // Each test fixes "now" once, so a window boundary passing mid-test cannot move its windows.
  let now = Date.now();
  beforeEach(() => (now = Date.now()));
  const windowStart = (offsetWindows = 0) => new Date(Math.floor(now / WINDOW_MS) * WINDOW_MS + offsetWindows * WINDOW_MS);

  it('counts concurrent hits from two processes exactly, each hit getting its own count', async () => {
    const key = uniqueKey();
    const start = windowStart();
    const hits = await Promise.all(
      Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? countersA : countersB).hit(key, start, WINDOW_MS)),
    );
    expect(hits.map((hit) => hit.currentHits).sort((a, b) => a - b)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    expect(hits.every((hit) => hit.previousHits === 0)).toBe(true);
    const row = await prismaA.rateLimitCounter.findUniqueOrThrow({ where: { key_windowStart: { key, windowStart: start } } });
    expect(row.hits).toBe(200);
    // Kept one window past its own, to be read as "the previous window".
    expect(row.expiresAt.getTime()).toBe(start.getTime() + 2 * WINDOW_MS);
  });

  it("reads the previous window's count with the hit, and only that key's", async () => {
    const key = uniqueKey();
    const other = uniqueKey();
    for (let i = 0; i < 7; i += 1) await countersA.hit(key, windowStart(-1), WINDOW_MS);
    await countersA.hit(other, windowStart(-1), WINDOW_MS);
    // Two windows back is not "previous".
    await countersA.hit(key, windowStart(-2), WINDOW_MS);

    await expect(countersB.hit(key, windowStart(), WINDOW_MS)).resolves.toEqual({ currentHits: 1, previousHits: 7 });
    await expect(countersA.hit(key, windowStart(), WINDOW_MS)).resolves.toEqual({ currentHits: 2, previousHits: 7 });
    await expect(countersA.hit(other, windowStart(), WINDOW_MS)).resolves.toEqual({ currentHits: 1, previousHits: 1 });
    // Window length matters: with 2-minute windows the previous window starts elsewhere.
    await expect(countersA.hit(uniqueKey(), windowStart(), 2 * WINDOW_MS)).resolves.toEqual({ currentHits: 1, previousHits: 0 });
  });

  it('deleteExpired() removes only counters whose expiry has passed', async () => {
    const expired = uniqueKey();
    const live = uniqueKey();
    const past = new Date(Date.now() - 10 * WINDOW_MS);
    await prismaA.rateLimitCounter.createMany({
      data: [
        { key: expired, windowStart: past, hits: 3, expiresAt: new Date(Date.now() - 1_000) },
        { key: live, windowStart: past, hits: 3, expiresAt: new Date(Date.now() + 60_000) },
      ],
    });
    await countersA.hit(live, windowStart(), WINDOW_MS);

    const deleted = await countersB.deleteExpired();
    expect(deleted).toBeGreaterThanOrEqual(1);
    expect(await prismaA.rateLimitCounter.count({ where: { key: expired } })).toBe(0);
    expect(await prismaA.rateLimitCounter.count({ where: { key: live } })).toBe(2);
  });

  it('deleteExpired() works in bounded batches', async () => {
    const keys = Array.from({ length: 5 }, uniqueKey);
    await prismaA.rateLimitCounter.createMany({
      data: keys.map((key) => ({ key, windowStart: new Date(0), hits: 1, expiresAt: new Date(1) })),
    });
    expect(await countersA.deleteExpired(2)).toBe(2);
    await expect(countersA.deleteExpired(0)).rejects.toMatchObject({ code: 'invalid_input' });
    while ((await countersA.deleteExpired(2)) > 0);
    expect(await prismaA.rateLimitCounter.count({ where: { key: { in: keys } } })).toBe(0);
  });

  it('refuses bad input', async () => {
    await expect(countersA.hit('', windowStart(), WINDOW_MS)).rejects.toMatchObject({ code: 'invalid_input' });
    await expect(countersA.hit(uniqueKey(), windowStart(), 0)).rejects.toMatchObject({ code: 'invalid_input' });
    await expect(countersA.hit(uniqueKey(), new Date(Number.NaN), WINDOW_MS)).rejects.toMatchObject({ code: 'invalid_input' });
  });
});
