import { randomBytes, randomInt } from 'node:crypto';
import { startTestServer, type TestServer } from '../support/test-server';

/**
 * Behind a load balancer (docker/haproxy/haproxy.cfg sets X-Forwarded-For) every request arrives
 * from the balancer's address. With TRUST_PROXY naming the balancer, the anonymous rate limit (wrong
 * or missing keys) counts per real client again; without it, X-Forwarded-For is ignored, so a client
 * cannot pick a fresh address per request to escape its budget.
 */
const LIMIT = 2;
/** A documentation-range address of this run's own (the counters are shared through the database). */
const clientAddress = () => `198.51.${randomInt(0, 256)}.${randomInt(1, 255)}`;

describe('TRUST_PROXY and the anonymous rate limit (e2e)', () => {
  let behindProxy: TestServer;
  let direct: TestServer;

  beforeAll(async () => {
    const env = { RATE_LIMIT_ANONYMOUS_REQUESTS: String(LIMIT), RATE_LIMIT_WINDOW_MS: '60000' };
    [behindProxy, direct] = await Promise.all([startTestServer({ ...env, TRUST_PROXY: 'loopback' }), startTestServer(env)]);
  }, 60_000);

  afterAll(async () => Promise.all([behindProxy?.close(), direct?.close()]));

  const wrongKey = `sk_test_${randomBytes(20).toString('hex')}`;
  const statusFrom = async (server: TestServer, forwardedFor: string) =>
    (await fetch(`${server.serverUrl}/v1/agents`, { headers: { authorization: `Bearer ${wrongKey}`, 'x-forwarded-for': forwardedFor } })).status;

  it('behind a trusted proxy: each client its own budget, as forwarded', async () => {
    const [first, second] = [clientAddress(), clientAddress()];
    const answers = [];
    for (let n = 0; n <= LIMIT; n++) answers.push(await statusFrom(behindProxy, first));
    expect(answers).toEqual([...Array(LIMIT).fill(401), 429]);
    // Another caller behind the same balancer is not limited by the first one's mistakes.
    expect(await statusFrom(behindProxy, second)).toBe(401);
  });

  it('without TRUST_PROXY: a forged X-Forwarded-For does not buy a fresh budget', async () => {
    // Every request comes from this test's loopback address; only the header changes.
    const answers = [];
    for (let n = 0; n < 20; n++) answers.push(await statusFrom(direct, clientAddress()));
    // All one client: past the budget (which other spec files' wrong keys from loopback may have
    // used up sooner, never later) every request is refused, whatever address it claims.
    expect(answers.slice(LIMIT)).toEqual(Array(20 - LIMIT).fill(429));
  });
});
