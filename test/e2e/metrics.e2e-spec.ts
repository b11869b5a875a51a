import { randomBytes } from 'node:crypto';
import { startTestServer, type TestServer } from '../support/test-server';

/** `GET /metrics` is the operator's: Prometheus text with this process's event-loop delay, CPU and memory. */
describe('GET /metrics (e2e)', () => {
  const operatorKey = randomBytes(24).toString('hex');
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ OPERATOR_API_KEY: operatorKey });
  }, 30_000);

  afterAll(async () => server?.close());

  it('answers the operator key with Prometheus text, and nobody else', async () => {
    const anonymous = await fetch(`${server.serverUrl}/metrics`);
    expect(anonymous.status).toBe(401);
    const tenant = await fetch(`${server.serverUrl}/metrics`, { headers: { authorization: `Bearer ${server.adminApiKey}` } });
    expect(tenant.status).toBe(401);
    const operator = await fetch(`${server.serverUrl}/metrics`, { headers: { authorization: `Bearer ${operatorKey}` } });
    expect(operator.status).toBe(200);
    expect(operator.headers.get('content-type')).toMatch(/^text\/plain;.*version=0\.0\.4/);
    const text = await operator.text();
    for (const name of ['nodejs_eventloop_lag_p99_seconds', 'process_cpu_seconds_total', 'process_resident_memory_bytes']) {
      expect(text).toMatch(new RegExp(`^${name} \\d`, 'm'));
    }
  });
});
