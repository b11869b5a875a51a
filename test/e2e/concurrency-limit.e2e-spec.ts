import { FakeTwilioRestServer } from '@switchboard/testing';
import { callTo } from '../support/conversation-agents';
import { ALL_AGENTS_BUSY_MESSAGE } from '../../apps/server/src/twilio/webhooks/inbound-call.service';
import { createOtherOrganizationKey, createRepositories, createTestPrisma, uniqueE164 } from '../support/database';
import { postCall, setUpLine, type OrganizationLine } from '../support/outbound-calls';
import { connectTwilioAccount, type TenantTwilioAccount } from '../support/tenant-twilio';
import { startTestServer, type TestServer } from '../support/test-server';

/**
 * The per-organization concurrency limit, against the real server and Postgres, in an organization
 * of this file's own (other test files run calls in the default organization at the same time).
 * Inbound and outbound calls share the limit; refusals are polite and counted.
 */
describe('concurrency limit per organization (e2e)', () => {
  let server: TestServer;
  let twilioRest: FakeTwilioRestServer;
  const prisma = createTestPrisma(2);
  const repositories = createRepositories(prisma);
  let orgKey: string;
  /** The organization's own Twilio account: its number is on it, its calls are placed and signed with it. */
  let account: TenantTwilioAccount;
  let line: OrganizationLine;

  beforeAll(async () => {
    // Inbound calls reach Twilio by phone: the fake takes any CallSid it is asked to hang up.
    twilioRest = await FakeTwilioRestServer.start({ acceptUnknownCalls: true });
    server = await startTestServer({
      TWILIO_ACCOUNT_SID: twilioRest.accountSid,
      TWILIO_AUTH_TOKEN: twilioRest.authToken,
      TWILIO_API_BASE_URL: twilioRest.baseUrl,
    });
    orgKey = await createOtherOrganizationKey(repositories, 'concurrency-limit');
    account = await connectTwilioAccount(server, orgKey, twilioRest);
    line = await setUpLine(server, orgKey, { engine: 'echo' }, { twilio: twilioRest, account });
  }, 30_000);

  afterAll(async () => {
    await server?.close();
    await twilioRest?.close();
    await prisma.$disconnect();
  });

  const organization = async () => (await server.api('/v1/organization', { apiKey: orgKey })).body;
  const setLimit = (maxConcurrentCalls: unknown, apiKey = orgKey) => server.api('/v1/organization', { method: 'PATCH', apiKey, body: { maxConcurrentCalls } });
  const callOut = () => postCall(server, orgKey, { agentId: line.agentId, to: uniqueE164(), from: line.number });
  const hangUp = (callId: string) => server.api(`/v1/calls/${callId}/hangup`, { method: 'POST', apiKey: orgKey });
  const callIn = () => callTo(server, line.number, { from: uniqueE164(), account });

  it('shows the default limit until the organization sets its own', async () => {
    const body = await organization();
    expect(body).toMatchObject({ maxConcurrentCalls: null, maxConcurrentCallsCap: 1000, effectiveMaxConcurrentCalls: 1000, activeCalls: 0, refusedCallsLast24h: 0, refusedCallsTotal: 0 });
    expect(body.name).toMatch(/^concurrency-limit-/);
  });

  it('refuses calls over the limit, outbound (429 + Retry-After) and inbound (polite TwiML), and counts them', async () => {
    const patched = await setLimit(1);
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ maxConcurrentCalls: 1, effectiveMaxConcurrentCalls: 1, activeCalls: 0 });

    const first = await callOut();
    expect(first.status).toBe(201);

    const second = await callOut();
    expect(second.status).toBe(429);
    expect(second.headers.get('retry-after')).toBe('30');
    expect(second.body).toMatchObject({ code: 'concurrency_limit', limit: 1, activeCalls: 1 });
    // Refused before Twilio: only the first call was placed (with the organization's own account).
    expect(twilioRest.requestsFor('create_call').filter((request) => request.form['From'] === line.number)).toHaveLength(1);
    expect(twilioRest.requestsFor('create_call').filter((request) => request.form['From'] === line.number)[0]).toMatchObject({ accountSid: account.accountSid });

    const inbound = callIn();
    const twiml = await inbound.dial();
    expect(twiml.rejected).toBe(true);
    expect(twiml.sayText).toBe(ALL_AGENTS_BUSY_MESSAGE);
    expect(twiml.verbs.map((verb) => verb.name)).toEqual(['Say', 'Hangup']);
    const rejected = await prisma.call.findUniqueOrThrow({ where: { twilioCallSid: inbound.parties.callSid } });
    expect(rejected).toMatchObject({ direction: 'inbound', endReason: 'concurrency_limit', agentId: line.agentId });
    expect(rejected.endedAt).toBeInstanceOf(Date);
    // Twilio retries a webhook it got no answer to: the retry is refused again, counted once.
    expect((await inbound.dial()).rejected).toBe(true);

    expect(await organization()).toMatchObject({ activeCalls: 1, refusedCallsLast24h: 2, refusedCallsTotal: 2 });
    const refusals = await prisma.callRefusal.findMany({ where: { organizationId: first.body.organizationId }, orderBy: { id: 'asc' } });
    expect(refusals.map((refusal) => [refusal.direction, refusal.reason, refusal.limit, refusal.activeCalls])).toEqual([
      ['outbound', 'concurrency_limit', 1, 1],
      ['inbound', 'concurrency_limit', 1, 1],
    ]);

    // The first call ends: there is room again, for inbound as for outbound.
    expect((await hangUp(first.body.id)).status).toBe(200);
    expect((await organization()).activeCalls).toBe(0);
    const admitted = await callIn().dial();
    expect(admitted.rejected).toBe(false);
    expect(admitted.stream?.parameters['callId']).toEqual(expect.any(String));
    // Inbound and outbound share the limit: the answered inbound call holds the only place.
    expect((await callOut()).status).toBe(429);
    expect((await hangUp(admitted.stream!.parameters['callId']!)).status).toBe(200);
    const third = await callOut();
    expect(third.status).toBe(201);
    expect((await hangUp(third.body.id)).status).toBe(200);
  });

  it('never admits more than the limit when calls are placed at the same moment', async () => {
    expect((await setLimit(2)).status).toBe(200);
    const answers = await Promise.all(Array.from({ length: 5 }, () => callOut()));

    expect(answers.map((answer) => answer.status).sort()).toEqual([201, 201, 429, 429, 429]);
    const organizationId = answers.find((answer) => answer.status === 201)!.body.organizationId as string;
    const live = await prisma.call.count({ where: { organizationId, endedAt: null, endReason: null } });
    expect(live).toBe(2);
    for (const refused of answers.filter((answer) => answer.status === 429)) expect(refused.body).toMatchObject({ limit: 2, activeCalls: 2 });

    for (const placed of answers.filter((answer) => answer.status === 201)) expect((await hangUp(placed.body.id)).status).toBe(200);
    expect((await organization()).activeCalls).toBe(0);
  });

  it('admits exactly up to the limit, in arrival order, when inbound calls arrive together (one group admission)', async () => {
    expect((await setLimit(4)).status).toBe(200);
    const callers = Array.from({ length: 10 }, () => callIn());
    // All dialled within the same moment: they are decided together, under the organization's lock.
    const answers = await Promise.all(callers.map((caller) => caller.dial()));
    expect(answers.filter((answer) => !answer.rejected)).toHaveLength(4);
    for (const refused of answers.filter((answer) => answer.rejected)) expect(refused.sayText).toBe(ALL_AGENTS_BUSY_MESSAGE);
    const admittedIds = answers.flatMap((answer) => (answer.rejected ? [] : [answer.stream!.parameters['callId']!]));
    expect(new Set(admittedIds).size).toBe(4);
    expect((await organization()).activeCalls).toBe(4);
    // A Twilio retry of an admitted call, arriving together with new calls, gets the same call back with a fresh token.
    const admittedCaller = callers[answers.findIndex((answer) => !answer.rejected)]!;
    const [retried, newcomer] = await Promise.all([admittedCaller.dial(), callIn().dial()]);
    expect(retried.rejected).toBe(false);
    expect(retried.stream?.parameters['callId']).toBe(admittedIds[0]);
    expect(newcomer.rejected).toBe(true);
    for (const callId of admittedIds) expect((await hangUp(callId)).status).toBe(200);
    expect((await organization()).activeCalls).toBe(0);
  });

  it('refuses everything at limit 0, and goes back to the default with null', async () => {
    expect((await setLimit(0)).status).toBe(200);
    expect((await callOut()).status).toBe(429);
    expect((await callIn().dial()).rejected).toBe(true);

    const reset = await setLimit(null);
    expect(reset.body).toMatchObject({ maxConcurrentCalls: null, effectiveMaxConcurrentCalls: 1000 });
    const placed = await callOut();
    expect(placed.status).toBe(201);
    expect((await hangUp(placed.body.id)).status).toBe(200);
  });

  describe('organization settings access', () => {
    it('lets a read key see the settings but not change them', async () => {
      const created = await server.api('/v1/api-keys', { method: 'POST', apiKey: orgKey, body: { name: 'viewer', scopes: ['read'] } });
      const seen = await server.api('/v1/organization', { apiKey: created.body.key });
      expect(seen.status).toBe(200);
      expect(seen.body.activeCalls).toEqual(expect.any(Number));
      const changed = await setLimit(5, created.body.key);
      expect(changed.status).toBe(403);
      expect(changed.body.code).toBe('insufficient_scope');
      expect((await server.api('/v1/organization', { apiKey: null })).status).toBe(401);
    });

    it.each([
      ['a negative limit', { maxConcurrentCalls: -1 }],
      ['a fractional limit', { maxConcurrentCalls: 1.5 }],
      ['a string', { maxConcurrentCalls: '3' }],
      ['a missing field', {}],
      ['an unknown field', { maxConcurrentCalls: 3, name: 'renamed' }],
      ['a limit above the operator\'s cap (MAX_CONCURRENT_CALLS_CAP=1000)', { maxConcurrentCalls: 1001 }],
    ])('answers 400 to %s', async (_label, body) => {
      const answer = await server.api('/v1/organization', { method: 'PATCH', apiKey: orgKey, body });
      expect(answer.status).toBe(400);
      expect(answer.body.code).toBe('validation_failed');
    });

    it('keeps each organization\'s settings to itself', async () => {
      const other = await server.api('/v1/organization');
      expect(other.status).toBe(200);
      expect(other.body.name).not.toMatch(/^concurrency-limit-/);
    });
  });
});
