import { HttpException } from '@nestjs/common';
import type { AppConfig } from '@switchboard/config';
import type { Response } from 'express';
import type { PinoLogger } from 'nestjs-pino';
import { Clock } from '../common/clock';
import { ApiKeyRateLimiter, RATE_LIMIT_CHECK_TIMEOUT_MS } from './api-key-rate-limiter';
import type { RateLimitCounts, RateLimitStore } from './rate-limit/rate-limit-store';

const WINDOW_MS = 60_000;
const START = 1_700_000_040_000; // a multiple of WINDOW_MS

/** The stores' contract, in memory: one counter per key and window. */
class InMemoryStore implements RateLimitStore {
  readonly backend = 'postgres';
  readonly counters = new Map<string, number>();

  async hit(key: string, windowStartMs: number, windowMs: number): Promise<RateLimitCounts> {
    const current = (this.counters.get(`${key}@${windowStartMs}`) ?? 0) + 1;
    this.counters.set(`${key}@${windowStartMs}`, current);
    return { currentHits: current, previousHits: this.counters.get(`${key}@${windowStartMs - windowMs}`) ?? 0 };
  }
}

function fakeResponse(): Response & { headers: Record<string, string> } {
  const headers: Record<string, string> = {};
  return { headers, setHeader: (name: string, value: string) => (headers[name] = value), getHeader: (name: string) => headers[name] } as any;
}

function setUp(store: RateLimitStore = new InMemoryStore()) {
  const config = { rateLimit: { requests: 3, anonymousRequests: 2, organizationRequests: 5, windowMs: WINDOW_MS } } as AppConfig;
  const logger = { setContext: jest.fn(), warn: jest.fn() };
  const limiter = new ApiKeyRateLimiter(config, store, logger as unknown as PinoLogger, new Clock());
  return { limiter, logger };
}

async function refusal(attempt: Promise<void>): Promise<{ status: number; body: any }> {
  const error = await attempt.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!(error instanceof HttpException)) throw new Error('expected an HttpException');
  return { status: error.getStatus(), body: error.getResponse() };
}

describe('ApiKeyRateLimiter', () => {
  let now: jest.SpyInstance<number>;
  beforeEach(() => (now = jest.spyOn(Date, 'now').mockReturnValue(START + 1_000)));
  afterEach(() => jest.restoreAllMocks());

  it('sets the RateLimit headers and answers 429 with Retry-After past the budget', async () => {
    const { limiter } = setUp();
    const remaining: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      const response = fakeResponse();
      await limiter.consume('key-1', response);
      expect(response.headers).toMatchObject({ 'RateLimit-Limit': '3', 'RateLimit-Reset': '59' });
      expect(response.headers['Retry-After']).toBeUndefined();
      remaining.push(response.headers['RateLimit-Remaining'] ?? '');
    }
    expect(remaining).toEqual(['2', '1', '0']);

    const response = fakeResponse();
    const refused = await refusal(limiter.consume('key-1', response));
    // 4 hits 1 s in: the next window holds them as previous; 4 * (1 - f) + 1 <= 3 at f = 1/2.
    expect(response.headers).toMatchObject({ 'RateLimit-Remaining': '0', 'Retry-After': '89', 'RateLimit-Reset': '89' });
    expect(refused).toEqual({
      status: 429,
      body: {
        statusCode: 429,
        error: 'Too Many Requests',
        code: 'rate_limited',
        message: 'This API key made more than 3 requests in 60 s. Retry after 89 s.',
        retryAfterSeconds: 89,
      },
    });
  });

  it('keeps budgets apart per key, for the operator and per client address', async () => {
    const store = new InMemoryStore();
    const { limiter } = setUp(store);
    for (let i = 0; i < 3; i += 1) await limiter.consume('key-1', fakeResponse());
    await limiter.consume('key-2', fakeResponse());
    await limiter.consumeOperator(fakeResponse());
    await limiter.consumeAnonymous('203.0.113.7', fakeResponse());
    expect([...store.counters.keys()].sort()).toEqual(
      [`anon:203.0.113.7@${START}`, `key:key-1@${START}`, `key:key-2@${START}`, `operator@${START}`].sort(),
    );
  });

  it("counts an organization's requests over all its keys, showing whichever budget has less left", async () => {
    const { limiter } = setUp();
    const headers: Array<Record<string, string>> = [];
    // What the guard does per request: the key's own budget, then the organization's.
    const request = async (key: string) => {
      const response = fakeResponse();
      headers.push(response.headers);
      await limiter.consume(key, response);
      await limiter.consumeOrganization('org-1', response);
    };
    for (let i = 0; i < 3; i += 1) await request('key-1');
    // The key's budget (3) is tighter than the organization's (5) so far.
    expect(headers.map((h) => h['RateLimit-Remaining'])).toEqual(['2', '1', '0']);
    expect(headers[0]?.['RateLimit-Limit']).toBe('3');

    // key-2 has 2 left, the organization 1: the organization's budget is the one shown.
    await request('key-2');
    expect(headers[3]).toMatchObject({ 'RateLimit-Limit': '5', 'RateLimit-Remaining': '1' });
    await request('key-2');
    expect(headers[4]).toMatchObject({ 'RateLimit-Limit': '5', 'RateLimit-Remaining': '0' });
    const response = fakeResponse();
    await limiter.consume('key-2', response);
    const refused = await refusal(limiter.consumeOrganization('org-1', response));
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: 'organization_rate_limited', message: expect.stringContaining("This organization's keys made more than 5 requests") });
    expect(response.headers).toMatchObject({ 'RateLimit-Limit': '5', 'RateLimit-Remaining': '0' });
    expect(response.headers['Retry-After']).toBeDefined();
    // Another organization is unaffected.
    await limiter.consumeOrganization('org-2', fakeResponse());
  });

  it('gives unknown keys their own, smaller budget per client address', async () => {
    const { limiter } = setUp();
    await limiter.consumeAnonymous('203.0.113.7', fakeResponse());
    await limiter.consumeAnonymous('::ffff:203.0.113.7', fakeResponse());
    const response = fakeResponse();
    const refused = await refusal(limiter.consumeAnonymous('203.0.113.7', response));
    expect(response.headers['RateLimit-Limit']).toBe('2');
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: 'rate_limited', message: expect.stringContaining('without a valid API key') });
    // Another address is unaffected.
    await limiter.consumeAnonymous('203.0.113.8', fakeResponse());
  });

  it('lets a refused client back in once the previous window has decayed', async () => {
    const { limiter } = setUp();
    for (let i = 0; i < 3; i += 1) await limiter.consume('key-1', fakeResponse());
    const response = fakeResponse();
    await refusal(limiter.consume('key-1', response));
    now.mockReturnValue(START + 1_000 + Number(response.headers['Retry-After']) * 1000);
    const later = fakeResponse();
    await limiter.consume('key-1', later);
    expect(later.headers['RateLimit-Remaining']).toBe('0');
  });

  it('fails open, with one warning, when the store rejects', async () => {
    const { limiter, logger } = setUp({ backend: 'redis', hit: () => Promise.reject(new Error('ECONNREFUSED')) });
    const response = fakeResponse();
    await limiter.consume('key-1', response);
    await limiter.consume('key-1', fakeResponse());
    expect(response.headers).toEqual({});
    expect(logger.warn).toHaveBeenCalledTimes(1);
    expect(logger.warn.mock.calls[0]?.[1]).toMatch(/redis.*failed; request let through/);
  });

  it('fails open when the store does not answer within the deadline', async () => {
    jest.useFakeTimers({ doNotFake: ['Date'] });
    try {
      const { limiter, logger } = setUp({ backend: 'postgres', hit: () => new Promise<RateLimitCounts>(() => undefined) });
      let settled = false;
      const check = limiter.consume('key-1', fakeResponse()).then(() => (settled = true));
      await jest.advanceTimersByTimeAsync(RATE_LIMIT_CHECK_TIMEOUT_MS - 1);
      expect(settled).toBe(false);
      await jest.advanceTimersByTimeAsync(1);
      await check;
      expect(settled).toBe(true);
      expect(logger.warn.mock.calls[0]?.[1]).toMatch(/did not answer within/);
    } finally {
      jest.useRealTimers();
    }
  });
});
