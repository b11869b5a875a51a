import { computeTwilioSignature, SimulatedTwilioCall, TwilioCallerError } from '@switchboard/simulated-caller';
import { createRepositories, createTestPrisma, uniqueCallSid, uniqueE164 } from '../support/database';
import { startTestServer, type TestServer } from '../support/test-server';
import { UNKNOWN_NUMBER_MESSAGE } from '../../apps/server/src/twilio/webhooks/inbound-call.service';

/** Twilio's HTTP side of the edge: the voice webhook and status callbacks, against the real server and Postgres. */
describe('Twilio webhooks (e2e)', () => {
  let server: TestServer;
  const prisma = createTestPrisma(2);
  const repositories = createRepositories(prisma);

  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server.close();
    await prisma.$disconnect();
  });

  const newCall = (to = server.echoNumber, callSid = uniqueCallSid()) =>
    new SimulatedTwilioCall({
      serverUrl: server.serverUrl,
      publicBaseUrl: server.publicBaseUrl,
      authToken: server.authToken,
      accountSid: server.accountSid,
      from: '+15550002222',
      to,
      callSid,
    });

  const storedCall = (callSid: string) => prisma.call.findUnique({ where: { twilioCallSid: callSid } });

  it('answers a known number with <Connect><Stream> to the signed media URL, with call id and single-use token', async () => {
    const callSid = uniqueCallSid();
    const twiml = await newCall(server.echoNumber, callSid).dial();
    expect(twiml.rejected).toBe(false);
    expect(twiml.stream?.url).toBe('wss://switchboard.test/twilio/media');
    const stored = await storedCall(callSid);
    expect(stored).not.toBeNull();
    expect(twiml.stream?.parameters['callId']).toBe(stored!.id);
    expect(twiml.stream?.parameters['streamToken']).toMatch(/^[\w-]{40,}$/);
    // Only the hash is stored: the token itself never touches the database.
    expect(JSON.stringify(stored)).not.toContain(twiml.stream!.parameters['streamToken']!);
    expect(stored).toMatchObject({ direction: 'inbound', toNumber: server.echoNumber, fromNumber: '+15550002222', agentConfigVersion: 1 });
  });

  it.each([
    ['tampered', 'tampered' as const],
    ['missing', 'omit' as const],
  ])('refuses a %s signature with 403 and stores nothing', async (_label, signature) => {
    const callSid = uniqueCallSid();
    const error = await newCall(server.echoNumber, callSid)
      .dial({ signature })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TwilioCallerError);
    expect((error as TwilioCallerError).httpStatus).toBe(403);
    expect(await storedCall(callSid)).toBeNull();
  });

  it('refuses a request signed for another URL (signature computed over a different host)', async () => {
    const callSid = uniqueCallSid();
    const forged = new SimulatedTwilioCall({
      serverUrl: server.serverUrl,
      publicBaseUrl: 'https://attacker.example.com',
      authToken: server.authToken,
      accountSid: server.accountSid,
      from: '+15550002222',
      to: server.echoNumber,
      callSid,
    });
    await expect(forged.dial()).rejects.toMatchObject({ httpStatus: 403 });
    expect(await storedCall(callSid)).toBeNull();
  });

  it('refuses a correctly signed webhook for another Twilio account', async () => {
    const callSid = uniqueCallSid();
    const otherAccount = new SimulatedTwilioCall({
      serverUrl: server.serverUrl,
      publicBaseUrl: server.publicBaseUrl,
      authToken: server.authToken,
      accountSid: `AC${'f'.repeat(32)}`,
      from: '+15550002222',
      to: server.echoNumber,
      callSid,
    });
    await expect(otherAccount.dial()).rejects.toMatchObject({ httpStatus: 403 });
    expect(await storedCall(callSid)).toBeNull();
  });

  it('turns away an unknown number politely (<Say> + <Hangup>) and records why', async () => {
    const callSid = uniqueCallSid();
    const twiml = await newCall(uniqueE164(), callSid).dial();
    expect(twiml.rejected).toBe(true);
    expect(twiml.sayText).toBe(UNKNOWN_NUMBER_MESSAGE);
    expect(twiml.verbs.map((verb) => verb.name)).toEqual(['Say', 'Hangup']);
    const stored = await storedCall(callSid);
    expect(stored).toMatchObject({ endReason: 'unknown_number', organizationId: null, agentId: null });
    expect(stored?.endedAt).toBeInstanceOf(Date);
  });

  it('answers 400 naming the missing field when the webhook lacks To', async () => {
    const broken = new SimulatedTwilioCall({
      serverUrl: server.serverUrl,
      publicBaseUrl: server.publicBaseUrl,
      authToken: server.authToken,
      accountSid: server.accountSid,
      from: '+15550002222',
      to: server.echoNumber,
      extraVoiceParams: { To: '' },
    });
    const failure = (await broken.dial().catch((caught: unknown) => caught)) as TwilioCallerError;
    expect(failure.httpStatus).toBe(400);
    expect(JSON.parse(failure.responseBody ?? '{}').details).toEqual(
      expect.arrayContaining([expect.objectContaining({ field: 'To' })]),
    );
  });

  describe('status callbacks', () => {
    it('applies out-of-order callbacks: the newest status wins, the timeline keeps all, answered/ended/billed are set', async () => {
      const callSid = uniqueCallSid();
      const call = newCall(server.echoNumber, callSid);
      await call.dial();
      const post = (status: string, sequence: number, extra: Record<string, string> = {}) =>
        postSignedForm(server, '/twilio/status', {
          CallSid: callSid,
          AccountSid: server.accountSid,
          CallStatus: status,
          SequenceNumber: String(sequence),
          Timestamp: new Date(Date.UTC(2026, 10, 22, 12, 0, sequence)).toUTCString(),
          ...extra,
        });
      // Twilio delivered them 2, 0, 1 (completed overtook the earlier ones).
      expect((await post('completed', 2, { CallDuration: '61', Duration: '2' })).status).toBe(204);
      expect((await post('ringing', 0)).status).toBe(204);
      expect((await post('in-progress', 1)).status).toBe(204);

      const stored = await storedCall(callSid);
      expect(stored).toMatchObject({ status: 'completed', durationSeconds: 61, billedMinutes: 2 });
      expect(stored?.answeredAt?.toISOString()).toBe('2026-11-22T12:00:01.000Z');
      expect(stored?.endedAt).toBeInstanceOf(Date);
      const detail = await repositories.calls.findDetail(stored!.organizationId!, stored!.id);
      expect(detail!.statusTimeline.map((entry) => entry.status)).toEqual(expect.arrayContaining(['completed', 'ringing', 'in-progress']));
    });

    it('refuses a forged status callback with 403 and changes nothing', async () => {
      const callSid = uniqueCallSid();
      await newCall(server.echoNumber, callSid).dial();
      const before = await storedCall(callSid);
      const response = await postSignedForm(server, '/twilio/status', { CallSid: callSid, AccountSid: server.accountSid, CallStatus: 'completed' }, 'wrong-token');
      expect(response.status).toBe(403);
      expect(await storedCall(callSid)).toEqual(before);
    });

    it('acknowledges a callback for an unknown call (Twilio would retry forever otherwise)', async () => {
      const response = await postSignedForm(server, '/twilio/status', {
        CallSid: uniqueCallSid(),
        AccountSid: server.accountSid,
        CallStatus: 'completed',
      });
      expect(response.status).toBe(204);
    });
  });
});

async function postSignedForm(server: TestServer, path: string, params: Record<string, string>, token = server.authToken) {
  const signature = computeTwilioSignature(token, `${server.publicBaseUrl}${path}`, params);
  return fetch(`${server.serverUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature },
    body: new URLSearchParams(params).toString(),
  });
}
