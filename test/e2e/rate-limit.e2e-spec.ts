import { randomBytes, randomInt } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { Clock } from '../../apps/server/src/common/clock';
import { createOtherOrganizationKey, createRepositories, createTestPrisma } from '../support/database';
import { startTestServer, type TestServer } from '../support/test-server';
import type { PrismaService } from '../../libs/persistence/src/prisma.service';

const LIMIT = 5;
const WINDOW_MS = 2_000;
/** The machine's Redis, for the variant with REDIS_URL; override with TEST_REDIS_URL. */
const REDIS_URL = process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';

/**
 * Windows are aligned multiples of their length (every process names the same one): a test that
 * counts exact remaining budgets stops the servers' clocks at the start of a window, so however
 * long its requests take they all fall in that one window.
 */
function stopAtNextWindow(servers: TestServer[], windowMs: number): number {
  const start = Math.ceil((Date.now() + 1) / windowMs) * windowMs;
  for (const server of servers) server.app.get(Clock).stopAt(new Date(start));
  return start;
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

/** GET from a given local address, so a test's anonymous requests have a client address of their own. */
function getFrom(localAddress: string, url: string, apiKey: string | null): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { localAddress, headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {} }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text ? JSON.parse(text) : undefined }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('Per-key rate limiting and request ids (e2e)', () => {
  let server: TestServer;
  let prisma: PrismaService;
  let keyA: string;
  let keyB: string;

  beforeAll(async () => {
    server = await startTestServer({ RATE_LIMIT_REQUESTS: String(LIMIT), RATE_LIMIT_WINDOW_MS: String(WINDOW_MS) });
    prisma = createTestPrisma(2);
    const repositories = createRepositories(prisma);
    keyA = await createOtherOrganizationKey(repositories, 'rate-limit-a');
    keyB = await createOtherOrganizationKey(repositories, 'rate-limit-b');
  });
  afterAll(async () => {
    await server?.close();
    await prisma?.$disconnect();
  });

  const get = (apiKey: string | null, headers: Record<string, string> = {}) =>
    fetch(`${server.serverUrl}/v1/agents`, { headers: { ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}), ...headers } });

  it('answers 429 with Retry-After once a key is over its budget, without touching other keys, and lets it back in after the window', async () => {
    const windowStart = stopAtNextWindow([server], WINDOW_MS);
    const remaining: string[] = [];
    for (let i = 0; i < LIMIT; i += 1) {
      const response = await get(keyA);
      expect(response.status).toBe(200);
      expect(response.headers.get('ratelimit-limit')).toBe(String(LIMIT));
      remaining.push(response.headers.get('ratelimit-remaining') ?? '');
    }
    expect(remaining).toEqual(['4', '3', '2', '1', '0']);

    const limited = await get(keyA);
    expect(limited.status).toBe(429);
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    // Sliding window: this window's hits still weigh on the next one, so waiting can reach into it.
    expect(retryAfter).toBeLessThanOrEqual((2 * WINDOW_MS) / 1000);
    expect(limited.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(await limited.json()).toMatchObject({ statusCode: 429, code: 'rate_limited', retryAfterSeconds: retryAfter });

    // Another key of another organization has its own budget.
    expect((await get(keyB)).status).toBe(200);

    // An obedient client waits what Retry-After says: the server's clock is moved on by exactly that.
    server.app.get(Clock).stopAt(new Date(windowStart + retryAfter * 1000));
    expect((await get(keyA)).status).toBe(200);
    // Real time again for the next test, which counts nothing exactly.
    server.app.get(Clock).travelTo(new Date());
  });

  it('puts a request id on every response (success, 401, 404, health) and keeps a well-formed one the client sent', async () => {
    const responses = [
      await get(keyB),
      await get(null),
      await fetch(`${server.serverUrl}/v1/calls/00000000-0000-4000-8000-000000000000`, { headers: { authorization: `Bearer ${keyB}` } }),
      await fetch(`${server.serverUrl}/health`),
    ];
    const ids = responses.map((response) => response.headers.get('x-request-id'));
    for (const id of ids) expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Set(ids).size).toBe(ids.length);
    expect(responses.map((response) => response.status)).toEqual([200, 401, 404, 200]);

    const traced = await get(keyB, { 'x-request-id': 'client-trace-42' });
    expect(traced.headers.get('x-request-id')).toBe('client-trace-42');
    // A header that could smuggle text into logs is replaced, not echoed.
    const hostile = await get(keyB, { 'x-request-id': 'x'.repeat(300) });
    expect(hostile.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});

/*
 * Two server processes' worth of servers (own Nest apps and pools) on the shared test database:
 * with per-process counters each would allow LIMIT requests, 2 * LIMIT together.
 */
describe.each([
  ['Postgres', {}],
  ['Redis', { REDIS_URL }],
])('Rate limits shared by two server instances, counters in %s (e2e)', (_backend, backendEnv: Record<string, string>) => {
  const SHARED_WINDOW_MS = 60_000;
  const ANONYMOUS_LIMIT = 3;
  const env = {
    RATE_LIMIT_REQUESTS: String(LIMIT),
    RATE_LIMIT_ANONYMOUS_REQUESTS: String(ANONYMOUS_LIMIT),
    RATE_LIMIT_WINDOW_MS: String(SHARED_WINDOW_MS),
    OPERATOR_API_KEY: `op_test_${randomBytes(24).toString('hex')}`,
    ...backendEnv,
  };
  let first: TestServer;
  let second: TestServer;
  let prisma: PrismaService;
  let repositories: ReturnType<typeof createRepositories>;

  beforeAll(async () => {
    [first, second] = await Promise.all([startTestServer(env), startTestServer(env)]);
    prisma = createTestPrisma(2);
    repositories = createRepositories(prisma);
  });
  afterAll(async () => {
    await Promise.all([first?.close(), second?.close()]);
    await prisma?.$disconnect();
  });

  it('counts one key across both instances: 3 + 3 requests, the 6th is refused', async () => {
    // A key of its own: other spec files' traffic must not count against it.
    const key = await createOtherOrganizationKey(repositories, 'rate-limit-shared');
    stopAtNextWindow([first, second], SHARED_WINDOW_MS);
    const answers = [];
    for (const target of [first, first, first, second, second, second]) {
      const response = await fetch(`${target.serverUrl}/v1/agents`, { headers: { authorization: `Bearer ${key}` } });
      answers.push({ status: response.status, remaining: response.headers.get('ratelimit-remaining'), body: await response.json() });
    }
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200, 429]);
    expect(answers.map((answer) => answer.remaining)).toEqual(['4', '3', '2', '1', '0', '0']);
    expect(answers[5]?.body).toMatchObject({ statusCode: 429, error: 'Too Many Requests', code: 'rate_limited' });
  });

  it('limits wrong keys per client address across both instances, answering 429 instead of 401, while valid keys still work', async () => {
    // A loopback address of this test's own, so other spec files' 401s do not share its budget.
    const address = `127.${randomInt(1, 255)}.${randomInt(0, 256)}.${randomInt(1, 255)}`;
    const key = await createOtherOrganizationKey(repositories, 'rate-limit-anonymous');
    const wrongKey = `sk_test_${randomBytes(20).toString('hex')}`;
    stopAtNextWindow([first, second], SHARED_WINDOW_MS);

    const refused = [
      await getFrom(address, `${first.serverUrl}/v1/agents`, wrongKey),
      await getFrom(address, `${second.serverUrl}/v1/agents`, null),
      // The operator's routes count wrong keys against the same budget.
      await getFrom(address, `${first.serverUrl}/v1/organizations`, wrongKey),
    ];
    expect(refused.map((answer) => [answer.status, answer.body.code])).toEqual([
      [401, 'invalid_api_key'],
      [401, 'missing_api_key'],
      [401, 'invalid_operator_key'],
    ]);

    for (const url of [`${second.serverUrl}/v1/agents`, `${first.serverUrl}/v1/organizations`]) {
      const limited = await getFrom(address, url, wrongKey);
      expect(limited.status).toBe(429);
      expect(limited.body).toMatchObject({ statusCode: 429, code: 'rate_limited', retryAfterSeconds: expect.any(Number) });
      expect(Number(limited.headers['retry-after'])).toBe(limited.body.retryAfterSeconds);
      expect(limited.headers['ratelimit-limit']).toBe(String(ANONYMOUS_LIMIT));
    }

    // A valid key from the same address is not charged to (or stopped by) the anonymous budget.
    for (const target of [first, second]) {
      const valid = await getFrom(address, `${target.serverUrl}/v1/agents`, key);
      expect(valid.status).toBe(200);
      expect(valid.headers['ratelimit-limit']).toBe(String(LIMIT));
    }
  });
});
