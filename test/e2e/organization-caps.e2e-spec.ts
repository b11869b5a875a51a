import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeLoopbackPort } from '@switchboard/testing';
import { LIVE_FEEDS_PER_ORGANIZATION } from '../../apps/server/src/calls/live-call-feed.service';
import { type ApiAnswer, apiRequest, type ApiRequestInit } from '../support/api-request';
import { BuiltServer } from '../support/built-server';

/**
 * Per-organization caps that must hold whichever process serves a request: the server as `npm
 * start` runs it with WORKERS=2 (two workers over the embedded database), so any cap counted in
 * one process's memory lets each worker grant it again.
 */
const OPERATOR_KEY = 'caps-test-operator-key-0123456789abcdef';
const KEY_LIMIT = 80;
const ORGANIZATION_LIMIT = 120;
const MAX_KEYS = 50;

describe('Organization caps across WORKERS=2 (e2e, the server in its own processes)', () => {
  let baseUrl: string;
  let dataDir: string;
  let server: BuiltServer;
  let requestNumber = 0;

  /** A request on a connection of its own (no keep-alive): node:cluster hands each new connection to the next worker. */
  function onNewConnection(path: string, apiKey: string, requestId: string): Promise<ApiAnswer> {
    return new Promise((resolve, reject) => {
      const req = httpRequest(`${baseUrl}${path}`, { agent: false, headers: { authorization: `Bearer ${apiKey}`, 'x-request-id': requestId } }, (res) => {
        // An admitted feed never ends by itself: its status is the answer.
        if (res.statusCode === 200 && res.headers['content-type']?.startsWith('text/event-stream')) {
          resolve({ status: 200, body: undefined });
          res.destroy();
          return;
        }
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text.length > 0 ? JSON.parse(text) : undefined }));
      });
      req.setTimeout(10_000, () => req.destroy(new Error(`${path}: no answer within 10 s`)));
      req.on('error', reject);
      req.end();
    });
  }

  /** The pid of the worker that answered the request, from its own "request completed" log line. */
  async function workerOf(requestId: string): Promise<number> {
    await server.waitForOutput(`"id":"${requestId}"`, 10_000);
    const line = server.output.split('\n').find((candidate) => candidate.includes(`"id":"${requestId}"`) && candidate.includes('"request completed"'));
    if (!line) throw new Error(`no "request completed" line for ${requestId}`);
    return (JSON.parse(line) as { pid: number }).pid;
  }

  const api = (path: string, apiKey: string, init: Omit<ApiRequestInit, 'apiKey'> = {}) => apiRequest(baseUrl, path, { ...init, apiKey });

  async function newOrganization(name: string): Promise<{ id: string; adminKey: string }> {
    const created = await api('/v1/organizations', OPERATOR_KEY, { method: 'POST', body: { name: `${name}-${Date.now()}` } });
    expect(created.status).toBe(201);
    return { id: created.body.id as string, adminKey: created.body.adminKey.key as string };
  }

  beforeAll(async () => {
    const port = await freeLoopbackPort();
    baseUrl = `http://127.0.0.1:${port}`;
    dataDir = mkdtempSync(join(tmpdir(), 'switchboard-caps-'));
    server = BuiltServer.spawn({
      WORKERS: '2',
      PORT: String(port),
      PUBLIC_BASE_URL: baseUrl,
      DATABASE_URL: '',
      DATA_DIR: dataDir,
      TWILIO_AUTH_TOKEN: 'caps-test-auth-token-0123456789',
      OPERATOR_API_KEY: OPERATOR_KEY,
      RATE_LIMIT_REQUESTS: String(KEY_LIMIT),
      RATE_LIMIT_ORGANIZATION_REQUESTS: String(ORGANIZATION_LIMIT),
      // One window for the whole file: no budget refills halfway through a test.
      RATE_LIMIT_WINDOW_MS: '3600000',
      MAX_API_KEYS_PER_ORG: String(MAX_KEYS),
      SHUTDOWN_TIMEOUT_MS: '5000',
      LOG_LEVEL: 'info',
    });
    await server.waitForOutput('2 workers listening', 150_000);
  }, 180_000);

  afterAll(async () => {
    await server?.stop(15_000);
    rmSync(dataDir, { recursive: true, force: true });
  }, 30_000);

  it(`refuses an organization's live feed past ${LIVE_FEEDS_PER_ORGANIZATION} whichever worker takes it, and frees the slot when one closes`, async () => {
    const org = await newOrganization('caps-feeds');
    const feeds: AbortController[] = [];
    try {
      for (let i = 0; i < LIVE_FEEDS_PER_ORGANIZATION; i++) {
        const aborted = new AbortController();
        feeds.push(aborted);
        // Each open feed keeps its connection, so every feed is a new connection, spread over both workers.
        const response = await fetch(`${baseUrl}/v1/calls/live`, { headers: { authorization: `Bearer ${org.adminKey}` }, signal: aborted.signal });
        expect(response.status).toBe(200);
      }
      // New connections until both workers have refused one (round robin: two or three tries).
      const refusedBy = new Set<number>();
      for (let attempt = 0; attempt < 10 && refusedBy.size < 2; attempt++) {
        const requestId = `caps-feed-${(requestNumber += 1)}`;
        const refused = await onNewConnection('/v1/calls/live', org.adminKey, requestId);
        expect(refused).toMatchObject({ status: 429, body: { code: 'too_many_live_feeds' } });
        refusedBy.add(await workerOf(requestId));
      }
      expect(refusedBy.size).toBe(2);

      feeds.shift()?.abort();
      // The worker that held it releases the lease once it sees the connection close; then any worker admits one more.
      let reopened: ApiAnswer | undefined;
      for (let attempt = 0; attempt < 50 && reopened?.status !== 200; attempt++) {
        const aborted = new AbortController();
        const response = await fetch(`${baseUrl}/v1/calls/live`, { headers: { authorization: `Bearer ${org.adminKey}` }, signal: aborted.signal });
        reopened = { status: response.status, body: undefined };
        if (response.status === 200) feeds.push(aborted);
        else await response.body?.cancel();
        if (response.status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(reopened?.status).toBe(200);
    } finally {
      for (const feed of feeds) feed.abort();
    }
  }, 60_000);

  it(`refuses the organization's key past ${MAX_KEYS} active with a 409 that says so, and one revoked frees a place`, async () => {
    const org = await newOrganization('caps-keys');
    const minted: string[] = [];
    // The organization's first admin key is one of the 50.
    for (let i = 1; i < MAX_KEYS; i++) {
      const created = await api('/v1/api-keys', org.adminKey, { method: 'POST', body: { name: `key-${i}`, scopes: ['read'] } });
      expect(created.status).toBe(201);
      minted.push(created.body.id as string);
    }
    const refused = await api('/v1/api-keys', org.adminKey, { method: 'POST', body: { name: 'one-too-many', scopes: ['read'] } });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ code: 'api_key_limit_reached' });
    expect(refused.body.message).toContain(`the limit is ${MAX_KEYS}`);

    expect((await api(`/v1/api-keys/${minted[0]}`, org.adminKey, { method: 'DELETE' })).status).toBe(204);
    const again = await api('/v1/api-keys', org.adminKey, { method: 'POST', body: { name: 'after-revoke', scopes: ['read'] } });
    expect(again.status).toBe(201);
  }, 60_000);

  it("refuses a second key's request once the organization's budget over all its keys is spent", async () => {
    const org = await newOrganization('caps-budget');
    const second = await api('/v1/api-keys', org.adminKey, { method: 'POST', body: { name: 'second', scopes: ['read'] } });
    expect(second.status).toBe(201);
    const secondKey = second.body.key as string;

    const spend = async (apiKey: string): Promise<{ allowed: number; refusal: ApiAnswer }> => {
      for (let allowed = 0; allowed <= ORGANIZATION_LIMIT; allowed++) {
        const answer = await api('/v1/agents', apiKey);
        if (answer.status !== 200) return { allowed, refusal: answer };
      }
      throw new Error(`no refusal after ${ORGANIZATION_LIMIT} requests`);
    };
    const first = await spend(org.adminKey);
    expect(first.refusal).toMatchObject({ status: 429, body: { code: 'rate_limited' } });
    // The admin key spent its own budget (and minted the second key): what the organization has left is less than a key's budget.
    const then = await spend(secondKey);
    expect(then.refusal).toMatchObject({ status: 429, body: { code: 'organization_rate_limited' } });
    expect(then.allowed).toBeLessThan(KEY_LIMIT);
    expect(1 + first.allowed + then.allowed).toBe(ORGANIZATION_LIMIT);
  }, 90_000);
});
