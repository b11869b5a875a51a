import { startTestServer, type TestServer } from '../support/test-server';

describe('GET /v1/calls filters (e2e)', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it.each([
    ['agentId', 'agentId=not-a-uuid', /^agentId$/],
    ['status', 'status=completed,done', /^status/],
    ['direction', 'direction=sideways', /^direction$/],
    ['from', 'from=yesterday', /^from$/],
    ['to without a time zone', 'to=2031-01-01T00:00:00', /^to$/],
  ])('answers 400 naming the field for a bad %s', async (_label, query, field) => {
    const response = await server.api(`/v1/calls?${query}`);
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('validation_failed');
    expect(response.body.details).toEqual([expect.objectContaining({ field: expect.stringMatching(field) })]);
  });

  it.each([
    ['equal', '2031-01-01T00:00:00Z', '2031-01-01T00:00:00Z'],
    ['inverted', '2031-01-02T00:00:00Z', '2031-01-01T00:00:00+02:00'],
  ])('answers 400 when from and to are %s', async (_label, from, to) => {
    const response = await server.api(`/v1/calls?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`);
    expect(response.status).toBe(400);
    expect(response.body.details).toEqual([expect.objectContaining({ field: 'to', message: 'to must be after from' })]);
  });

  it('accepts every filter together and applies them (an unknown agent has no calls)', async () => {
    const query = new URLSearchParams({
      agentId: '00000000-0000-4000-8000-000000000000',
      status: 'completed,in-progress',
      direction: 'inbound',
      from: '2031-01-01T00:00:00Z',
      to: '2031-01-02T00:00:00+01:00',
      limit: '5',
    });
    const response = await server.api(`/v1/calls?${query.toString()}`);
    expect(response.status).toBe(200);
    // No call belongs to this made-up agent, so the filter must have been applied.
    expect(response.body).toEqual({ data: [], nextCursor: null });
  });
});
