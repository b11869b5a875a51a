import { createOtherOrganizationKey, createRepositories, createTestPrisma } from '../support/database';
import { startTestServer, type TestServer } from '../support/test-server';
import type { PrismaService } from '../../libs/persistence/src/prisma.service';

const LIMIT = 5;
const WINDOW_MS = 2_000;

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
    expect(retryAfter).toBeLessThanOrEqual(WINDOW_MS / 1000);
    expect(limited.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(await limited.json()).toMatchObject({ statusCode: 429, code: 'rate_limited', retryAfterSeconds: retryAfter });

    // Another key of another organization has its own budget.
    expect((await get(keyB)).status).toBe(200);

    await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000 + 100));
    expect((await get(keyA)).status).toBe(200);
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
