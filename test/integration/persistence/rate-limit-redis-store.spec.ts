import { randomUUID } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import Redis from 'ioredis';
import type { AppConfig } from '@switchboard/config';
import type { PinoLogger } from 'nestjs-pino';
import { ApiKeyRateLimiter } from '../../../apps/server/src/auth/api-key-rate-limiter';
import { Clock } from '../../../apps/server/src/common/clock';
import { RedisRateLimitStore } from '../../../apps/server/src/auth/rate-limit/redis-rate-limit-store';

/** The machine's Redis; override with TEST_REDIS_URL. */
const REDIS_URL = process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';
const WINDOW_MS = 60_000;

/** A local port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('RedisRateLimitStore (real Redis)', () => {
  // This run's counters only, so parallel runs and leftovers never mix in; deleted afterwards.
  const keyPrefix = `switchboard-test:${randomUUID()}:`;
  const logger = { warn: jest.fn() };
  const storeA = new RedisRateLimitStore({ url: REDIS_URL, keyPrefix }, logger);
  const storeB = new RedisRateLimitStore({ url: REDIS_URL, keyPrefix }, logger);
  const admin = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });

  afterAll(async () => {
    const keys = await admin.keys(`${keyPrefix}*`);
    if (keys.length > 0) await admin.del(...keys);
    await Promise.all([storeA.onModuleDestroy(), storeB.onModuleDestroy()]);
    await admin.quit();
  });

  let now = Date.now();
  beforeEach(() => (now = Date.now()));
  const windowStart = (offsetWindows = 0) => Math.floor(now / WINDOW_MS) * WINDOW_MS + offsetWindows * WINDOW_MS;

  it('counts concurrent hits from two clients exactly, each hit getting its own count', async () => {
    const key = `key:${randomUUID()}`;
    const hits = await Promise.all(
      Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? storeA : storeB).hit(key, windowStart(), WINDOW_MS)),
    );
    expect(hits.map((hit) => hit.currentHits).sort((a, b) => a - b)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    expect(hits.every((hit) => hit.previousHits === 0)).toBe(true);
    // Expires by itself after two windows: there is no cleanup job for Redis.
    const ttl = await admin.pttl(`${keyPrefix}{${key}}:${windowStart()}`);
    expect(ttl).toBeGreaterThan(2 * WINDOW_MS - 5_000);
    expect(ttl).toBeLessThanOrEqual(2 * WINDOW_MS);
  });

  it("reads the previous window's count with the hit, and only that key's", async () => {
    const key = `key:${randomUUID()}`;
    for (let i = 0; i < 4; i += 1) await storeA.hit(key, windowStart(-1), WINDOW_MS);
    await storeA.hit(key, windowStart(-2), WINDOW_MS);
    await expect(storeB.hit(key, windowStart(), WINDOW_MS)).resolves.toEqual({ currentHits: 1, previousHits: 4 });
    await expect(storeA.hit(key, windowStart(), WINDOW_MS)).resolves.toEqual({ currentHits: 2, previousHits: 4 });
    await expect(storeA.hit(`key:${randomUUID()}`, windowStart(), WINDOW_MS)).resolves.toEqual({ currentHits: 1, previousHits: 0 });
  });

  it('fails fast when Redis is unreachable, and the limiter then lets the request through', async () => {
    const warnings = { warn: jest.fn() };
    const down = new RedisRateLimitStore({ url: `redis://127.0.0.1:${await closedPort()}` }, warnings);
    try {
      const startedAt = Date.now();
      await expect(down.hit('key:down', windowStart(), WINDOW_MS)).rejects.toThrow();
      expect(Date.now() - startedAt).toBeLessThan(1_500);

      const config = { rateLimit: { requests: 1, anonymousRequests: 1, windowMs: WINDOW_MS } } as AppConfig;
      const limiterLogger = { setContext: jest.fn(), warn: jest.fn() };
      const limiter = new ApiKeyRateLimiter(config, down, limiterLogger as unknown as PinoLogger, new Clock());
      const headers: Record<string, string> = {};
      const response = { setHeader: (name: string, value: string) => (headers[name] = value) } as any;
      const checkedAt = Date.now();
      for (let i = 0; i < 3; i += 1) await limiter.consume('key-down', response);
      expect(Date.now() - checkedAt).toBeLessThan(3 * 1_500);
      expect(headers).toEqual({});
      expect(limiterLogger.warn).toHaveBeenCalled();
      expect(warnings.warn).toHaveBeenCalled();
    } finally {
      await down.onModuleDestroy();
    }
  });

  it('closes its connection on shutdown', async () => {
    const store = new RedisRateLimitStore({ url: REDIS_URL, keyPrefix }, logger);
    await store.hit(`key:${randomUUID()}`, windowStart(), WINDOW_MS);
    await store.onModuleDestroy();
    await expect(store.hit('key:closed', windowStart(), WINDOW_MS)).rejects.toThrow(/Connection is closed/);
  });
});
