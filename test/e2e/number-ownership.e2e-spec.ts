import { encodeMulaw, sineTone } from '@switchboard/audio';
import { FakeTwilioRestServer } from '@switchboard/testing';
import { callTo } from '../support/conversation-agents';
import { createOtherOrganizationKey, createRepositories, createTestPrisma, uniqueCallSid, uniqueE164 } from '../support/database';
import { bindTenantNumber, connectTwilioAccount, type TenantTwilioAccount } from '../support/tenant-twilio';
import { eventually, startTestServer, type TestServer } from '../support/test-server';

/**
 * Numbers belong to an organization's own Twilio account. Tried as a tenant would: binding a number
 * another account owns, signing a voice webhook or media socket with another account's (valid)
 * credentials, replaying another organization's stream token on one's own media path. Each is
 * refused; the owner's calls keep working end to end, verified with its own account's token.
 */
describe('Numbers belong to the organization\'s own Twilio account (e2e)', () => {
  let server: TestServer;
  let twilio: FakeTwilioRestServer;
  const prisma = createTestPrisma(2);
  let keyA: string;
  let keyB: string;
  let accountA: TenantTwilioAccount;
  let accountB: TenantTwilioAccount;
  let echoA: string;

  beforeAll(async () => {
    twilio = await FakeTwilioRestServer.start();
    server = await startTestServer({ TWILIO_ACCOUNT_SID: twilio.accountSid, TWILIO_AUTH_TOKEN: twilio.authToken, TWILIO_API_BASE_URL: twilio.baseUrl });
    const repos = createRepositories(prisma);
    keyA = await createOtherOrganizationKey(repos, 'numbers-a');
    keyB = await createOtherOrganizationKey(repos, 'numbers-b');
    accountA = await connectTwilioAccount(server, keyA, twilio);
    accountB = await connectTwilioAccount(server, keyB, twilio);
    const agent = await server.api('/v1/agents', { apiKey: keyA, method: 'POST', body: { name: 'echo of A', engine: 'echo' } });
    echoA = agent.body.id;
  }, 30_000);

  afterAll(async () => {
    await server?.close();
    await twilio?.close();
    await prisma.$disconnect();
  });

  describe('connecting an account', () => {
    it('checks the credentials with Twilio, keeps the token out of every answer, and refuses an account another organization holds', async () => {
      const shown = await server.api('/v1/organization/twilio-account', { apiKey: keyA });
      expect(shown.body).toEqual({ accountSid: accountA.accountSid, updatedAt: expect.any(String) });
      expect(JSON.stringify(shown.body)).not.toContain(accountA.authToken);

      const wrongToken = await server.api('/v1/organization/twilio-account', { apiKey: keyB, method: 'PUT', body: { accountSid: accountB.accountSid, authToken: 'f'.repeat(32) } });
      expect(wrongToken.status).toBe(400);
      expect(wrongToken.body.code).toBe('twilio_credentials_invalid');
      const taken = await server.api('/v1/organization/twilio-account', { apiKey: keyB, method: 'PUT', body: accountA });
      expect(taken.status).toBe(409);
      expect(taken.body.code).toBe('twilio_account_taken');
      // The bootstrap organization is the operator's account's.
      expect((await server.api('/v1/organization/twilio-account', { method: 'PUT', body: accountB })).body.code).toBe('operator_account');
    });

    it("refuses the deployment's own account (TWILIO_ACCOUNT_SID, valid credentials): the bootstrap organization's calls keep it", async () => {
      const keyC = await createOtherOrganizationKey(createRepositories(prisma), 'numbers-operator-sid');
      const operator = { accountSid: twilio.accountSid, authToken: twilio.authToken };
      const taken = await server.api('/v1/organization/twilio-account', { apiKey: keyC, method: 'PUT', body: operator });
      expect(taken.status).toBe(409);
      expect(taken.body.code).toBe('twilio_account_taken');
      expect((await server.api('/v1/organization/twilio-account', { apiKey: keyC })).status).toBe(404);
      // A call to the bootstrap organization's number, signed for the operator's account, still connects.
      const echo = await server.callEcho({ audio: encodeMulaw(sineTone({ frequencyHz: 440, durationMs: 300, sampleRate: 8000, amplitudeDbfs: -12 })), trailingSilenceMs: 100 });
      expect(echo.rejected).toBe(false);
    }, 30_000);
  });

  describe('binding a number', () => {
    it("is refused for a number another Twilio account owns, and for an organization without an account", async () => {
      const ofB = uniqueE164();
      twilio.addIncomingNumber(accountB.accountSid, ofB);
      const refused = await server.api('/v1/phone-numbers', { apiKey: keyA, method: 'POST', body: { e164: ofB, agentId: echoA } });
      expect(refused.status).toBe(400);
      expect(refused.body.code).toBe('number_not_in_twilio_account');
      // Twilio's PhoneNumber filter matches partially (B's account answers ofB for its prefix): only an exact match counts.
      const prefixOfB = ofB.slice(0, -1);
      expect((await server.api('/v1/phone-numbers', { apiKey: keyB, method: 'POST', body: { e164: prefixOfB, agentId: null } })).body.code).toBe('number_not_in_twilio_account');

      const keyC = await createOtherOrganizationKey(createRepositories(prisma), 'numbers-c');
      const noAccount = await server.api('/v1/phone-numbers', { apiKey: keyC, method: 'POST', body: { e164: uniqueE164(), agentId: null } });
      expect(noAccount.status).toBe(400);
      expect(noAccount.body.code).toBe('twilio_account_missing');
    });

    it('answers 502 when Twilio cannot be asked, and binds nothing', async () => {
      const number = uniqueE164();
      twilio.addIncomingNumber(accountA.accountSid, number);
      twilio.failNext('list_incoming_numbers', 'server_error');
      const unchecked = await server.api('/v1/phone-numbers', { apiKey: keyA, method: 'POST', body: { e164: number, agentId: echoA } });
      expect(unchecked.status).toBe(502);
      const listed = await server.api('/v1/phone-numbers', { apiKey: keyA });
      expect(listed.body.data.map((bound: { e164: string }) => bound.e164)).not.toContain(number);
    });

    it('binds a number of the own account; once released (and moved at Twilio), another organization can bind it', async () => {
      const number = await bindTenantNumber(server, keyA, twilio, accountA, echoA);
      const listed = await server.api('/v1/phone-numbers', { apiKey: keyA });
      const bound = listed.body.data.find((entry: { e164: string }) => entry.e164 === number);
      expect(bound).toMatchObject({ e164: number, agentId: echoA });
      // B cannot take it while A holds it (and it is A's at Twilio anyway).
      expect((await server.api('/v1/phone-numbers', { apiKey: keyB, method: 'POST', body: { e164: number, agentId: null } })).status).toBe(400);
      expect((await server.api(`/v1/phone-numbers/${bound.id}`, { apiKey: keyA, method: 'DELETE' })).status).toBe(204);
      twilio.removeIncomingNumber(accountA.accountSid, number);
      twilio.addIncomingNumber(accountB.accountSid, number);
      expect((await server.api('/v1/phone-numbers', { apiKey: keyB, method: 'POST', body: { e164: number, agentId: null } })).status).toBe(201);
    });
  });

  describe("calls to an organization's number", () => {
    let numberA: string;
    beforeAll(async () => {
      numberA = await bindTenantNumber(server, keyA, twilio, accountA, echoA);
    });

    it("work end to end with the organization's own account: the webhook and the media socket are verified with its token", async () => {
      const call = callTo(server, numberA, { account: accountA });
      const twiml = await call.dial();
      expect(twiml.rejected).toBe(false);
      expect(twiml.stream!.url).toBe(`wss://switchboard.test/twilio/media/${accountA.accountSid}`);
      await call.connectMedia();
      await call.waitForMessage((message) => message.event === 'media', 10_000);
      await call.hangup();
      const callId = twiml.stream!.parameters['callId']!;
      const detail = await eventually(async () => (await server.api(`/v1/calls/${callId}`, { apiKey: keyA })).body, (body) => body.endReason !== null, 10_000);
      expect(detail).toMatchObject({ twilioAccountSid: accountA.accountSid, endReason: 'stream_stopped' });
    }, 30_000);

    it("refuses a voice webhook signed by another account (B's valid credentials, or the operator's): the call is never recorded", async () => {
      for (const account of [accountB, { accountSid: server.accountSid, authToken: server.authToken }]) {
        const callSid = uniqueCallSid();
        const response = await callTo(server, numberA, { account, callSid }).dial().catch((error: unknown) => error);
        expect(String(response)).toMatch(/HTTP 403.*wrong_account/);
        await expect(prisma.call.findUnique({ where: { twilioCallSid: callSid } })).resolves.toBeNull();
      }
    });

    it("refuses a stream claimed through another account's media path, and a status callback another account signed; the owner's call is untouched", async () => {
      const ownerCallSid = uniqueCallSid();
      const owner = callTo(server, numberA, { account: accountA, callSid: ownerCallSid });
      const twiml = await owner.dial();
      const stream = twiml.stream!;
      // B signs an upgrade on its own path (valid for B) and presents A's call and token.
      const intruder = callTo(server, numberA, { account: accountB });
      await intruder.connectMedia({ stream: { ...stream, url: stream.url.replace(accountA.accountSid, accountB.accountSid) } });
      const closed = await intruder.closed;
      expect(closed).toMatchObject({ code: 1008, closedBy: 'server' });
      // ...and on A's path its signature does not verify (HTTP 403 before the socket opens).
      const onOwnersPath = callTo(server, numberA, { account: accountB });
      await expect(onOwnersPath.connectMedia({ stream })).rejects.toThrow(/403/);
      // B cannot end A's call either.
      const forgedStatus = await callTo(server, numberA, { account: accountB, callSid: ownerCallSid })
        .sendStatusCallback('completed')
        .catch((error: unknown) => error);
      expect(String(forgedStatus)).toMatch(/HTTP 403.*wrong_account/);

      // The token was not spent: A's own stream still connects.
      await owner.connectMedia();
      await owner.waitForMessage((message) => message.event === 'media', 10_000);
      await owner.hangup();
      const detail = await eventually(async () => (await server.api(`/v1/calls/${stream.parameters['callId']}`, { apiKey: keyA })).body, (body) => body.endReason !== null, 10_000);
      expect(detail).toMatchObject({ endReason: 'stream_stopped', status: 'ringing' });
    }, 30_000);
  });
});
