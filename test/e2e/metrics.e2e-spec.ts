import { randomBytes } from 'node:crypto';
import { encodeMulaw, sineTone } from '@switchboard/audio';
import { sample } from '../support/prometheus-text';
import { startTestServer, type TestServer } from '../support/test-server';

/**
 * `GET /metrics` is the operator's and Prometheus's: with METRICS_TOKEN it takes that token only;
 * without it, only a client on this machine that did not come through a proxy. The series say what
 * to autoscale on (live calls by direction and engine, draining) and what callers got (admissions),
 * with bounded labels.
 */
const TONE = encodeMulaw(sineTone({ frequencyHz: 440, durationMs: 1000, sampleRate: 8000, amplitudeDbfs: -12 }));

describe('GET /metrics without METRICS_TOKEN (e2e)', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ METRICS_TOKEN: undefined });
  }, 30_000);

  afterAll(async () => server?.close());

  it('answers a client on this machine with Prometheus text, and nobody who came through a proxy', async () => {
    const local = await fetch(`${server.serverUrl}/metrics`);
    expect(local.status).toBe(200);
    expect(local.headers.get('content-type')).toMatch(/^text\/plain;.*version=0\.0\.4/);
    const text = await local.text();
    for (const name of ['nodejs_eventloop_lag_p99_seconds', 'process_cpu_seconds_total', 'process_resident_memory_bytes', 'switchboard_draining', 'switchboard_call_connections']) {
      expect(text).toMatch(new RegExp(`^${name} \\d`, 'm'));
    }
    // No call yet: the live-call gauge still has its series, at 0, for every direction and engine.
    for (const direction of ['inbound', 'outbound', 'web']) {
      for (const engine of ['echo', 'pipeline', 'realtime']) expect(sample(text, `switchboard_live_calls{direction="${direction}",engine="${engine}"}`)).toBe(0);
    }
    // The database pool: connections by state, and every wait for one (the server has queried already).
    expect(sample(text, 'switchboard_db_pool_connections{state="open"}')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'switchboard_db_pool_connections{state="waiting"}')).toBe(0);
    expect(sample(text, 'switchboard_db_pool_acquire_seconds_count')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'switchboard_db_pool_acquire_failures_total')).toBe(0);
    // The shared webhook outbox, read from the database at the scrape.
    expect(sample(text, 'switchboard_webhook_backlog{state="due"}')).toEqual(expect.any(Number));
    // Whichever header the proxy on this machine adds (nginx's X-Real-IP or Via as well), it is refused.
    const proxyHeaders = { 'x-forwarded-for': '203.0.113.7', forwarded: 'for=203.0.113.7', 'x-real-ip': '203.0.113.7', via: '1.1 nginx', 'x-forwarded-host': 'switchboard.example.com' };
    const answers: Record<string, string> = {};
    for (const [name, value] of Object.entries(proxyHeaders)) {
      const proxied = await fetch(`${server.serverUrl}/metrics`, { headers: { [name]: value } });
      // A 200 is Prometheus text, not JSON: no code.
      const body = (await proxied.json().catch(() => ({}))) as { code?: string };
      answers[name] = `${proxied.status} ${body.code ?? ''}`;
    }
    expect(answers).toEqual(Object.fromEntries(Object.keys(proxyHeaders).map((name) => [name, '403 metrics_loopback_only'])));
  });

  it('counts a live call by direction and engine while it runs, and its admission', async () => {
    let during = '';
    const result = await server.callEcho({
      audio: TONE,
      trailingSilenceMs: 400,
      onConnected: () => {
        // Scraped while the caller still streams: the call is live.
        setTimeout(() => void fetch(`${server.serverUrl}/metrics`).then(async (response) => (during = await response.text())), 600);
      },
    });
    expect(result.rejected).toBe(false);
    expect(sample(during, 'switchboard_live_calls{direction="inbound",engine="echo"}')).toBeGreaterThanOrEqual(1);
    const after = await (await fetch(`${server.serverUrl}/metrics`)).text();
    expect(sample(after, 'switchboard_call_admissions_total{direction="inbound",outcome="admitted"}')).toBeGreaterThanOrEqual(1);
    // Labels stay bounded: no call id, number or organization appears in any series.
    expect(after).not.toContain(result.twiml?.stream?.parameters['callId'] as string);
    expect(after).not.toMatch(/\+1555/);
  });
});

describe('GET /metrics with METRICS_TOKEN (e2e)', () => {
  const token = randomBytes(24).toString('hex');
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ METRICS_TOKEN: token });
  }, 30_000);

  afterAll(async () => server?.close());

  it('answers that token only, also on this machine', async () => {
    expect((await fetch(`${server.serverUrl}/metrics`)).status).toBe(401);
    const tenant = await fetch(`${server.serverUrl}/metrics`, { headers: { authorization: `Bearer ${server.adminApiKey}` } });
    expect(tenant.status).toBe(401);
    expect(((await tenant.json()) as { code: string }).code).toBe('invalid_metrics_token');
    const scraper = await fetch(`${server.serverUrl}/metrics`, { headers: { authorization: `Bearer ${token}`, 'x-forwarded-for': '203.0.113.7' } });
    expect(scraper.status).toBe(200);
    expect(await scraper.text()).toMatch(/^switchboard_draining 0$/m);
  });
});
