import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../support/test-server';

describe('health and the calls API (e2e)', () => {
  let server: TestServer;
  // No pulled model: local inference stays unstarted until a call needs it.
  const modelsDir = mkdtempSync(join(tmpdir(), 'switchboard-health-models-'));

  beforeAll(async () => {
    server = await startTestServer({ MODELS_DIR: modelsDir });
  });
  afterAll(async () => {
    await server.close();
    rmSync(modelsDir, { recursive: true, force: true });
  });

  it('GET /health answers liveness without touching dependencies', async () => {
    const response = await fetch(`${server.serverUrl}/health`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok' });
    expect(response.headers.get('x-request-id')).toMatch(/^[\w-]{8,}$/);
  });

  it('GET /health/ready reports the database reachable, and local inference not started without a pulled model', async () => {
    const response = await fetch(`${server.serverUrl}/health/ready`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ready', database: 'up', inference: { state: 'not_started' } });
  });

  it('echoes a caller-supplied request id', async () => {
    const response = await fetch(`${server.serverUrl}/health`, { headers: { 'x-request-id': 'trace-abc.123' } });
    expect(response.headers.get('x-request-id')).toBe('trace-abc.123');
  });

  it.each([
    ['no key', null],
    ['an unknown key', 'sk_test_not-a-real-key-0000000000000000'],
  ])('answers 401 to /v1/calls with %s', async (_label, apiKey) => {
    const list = await server.api('/v1/calls', { apiKey });
    expect(list.status).toBe(401);
    expect(list.body.code).toMatch(/api_key/);
    const detail = await server.api(`/v1/calls/${randomUUID()}`, { apiKey });
    expect(detail.status).toBe(401);
  });

  it('answers 404 for a call that does not exist', async () => {
    const response = await server.api(`/v1/calls/${randomUUID()}`);
    expect(response.status).toBe(404);
    expect(response.body.code).toBe('call_not_found');
  });

  it('answers 400 naming the field and rule for a bad query', async () => {
    const response = await server.api('/v1/calls?limit=0');
    expect(response.status).toBe(400);
    expect(response.body.details).toEqual([expect.objectContaining({ field: 'limit', rule: 'too_small' })]);
  });

  it('answers 400 for a cursor it did not issue', async () => {
    const response = await server.api('/v1/calls?cursor=bm90LWEtY3Vyc29y');
    expect(response.status).toBe(400);
  });

  it('pages through calls with a cursor', async () => {
    const first = await server.api('/v1/calls?limit=1');
    expect(first.status).toBe(200);
    expect(Array.isArray(first.body.data)).toBe(true);
    expect(first.body).toHaveProperty('nextCursor');
  });
});
