import { encodeMulaw, sineTone } from '@switchboard/audio';
import { APP_CONFIG } from '@switchboard/config';
import { CallEventRepository, CallStreamRepository, OrganizationRepository, PrismaService } from '@switchboard/persistence';
import { FakeTwilioRestServer } from '@switchboard/testing';
import { hashSecret } from '../../libs/persistence/src/secret-hash';
import { CallAdmissionService } from '../../apps/server/src/call-lifecycle/call-admission.service';
import { CallEndService } from '../../apps/server/src/call-lifecycle/call-end.service';
import { CallReconciler } from '../../apps/server/src/call-lifecycle/call-reconciler.service';
import { TwilioRestClientFactory } from '../../apps/server/src/twilio/call-control/twilio-rest-client.factory';
import { TwilioAccountService } from '../../apps/server/src/twilio/accounts/twilio-account.service';
import { DEFAULT_ORGANIZATION_NAME } from '../../apps/server/src/bootstrap/bootstrap.service';
import { bindAgent, callTo } from '../support/conversation-agents';
import { inboundCallInput } from '../support/database';
import { eventually, startTestServer, type TestServer } from '../support/test-server';

/**
 * Calls nobody carries any more are ended. A call whose media stream went quiet (the process that
 * carried it died, or could not write the end) holds a concurrency slot until something ends it:
 * the reconciler asks Twilio, with the call's own account, for the call's status, hangs it up there
 * if Twilio still has it live, and finalises it with end reason and event `reconciled`. A call this
 * process is carrying keeps its heartbeat fresh and is left alone.
 */
describe('The call reconciler (e2e)', () => {
  let server: TestServer;
  let twilio: FakeTwilioRestServer;
  let organizationId: string;
  let agentId: string;

  beforeAll(async () => {
    twilio = await FakeTwilioRestServer.start();
    server = await startTestServer({
      TWILIO_ACCOUNT_SID: twilio.accountSid,
      TWILIO_AUTH_TOKEN: twilio.authToken,
      TWILIO_API_BASE_URL: twilio.baseUrl,
      // The bound at its minimum, so a live call's heartbeat (every 1.25 s) is tested against it.
      CALL_RECONCILE_AFTER_MS: '5000',
    });
    organizationId = (await server.app.get(OrganizationRepository).ensure(DEFAULT_ORGANIZATION_NAME)).id;
    agentId = (await bindAgent(server, { engine: 'echo', config: {} })).agentId;
  }, 30_000);

  afterAll(async () => {
    await server?.close();
    await twilio?.close();
  });

  /** A call whose stream started `quietForMs` ago and was never heard of since, as a crashed process leaves it. */
  async function abandonedCall(twilioStatus: 'in-progress' | 'completed', quietForMs = 10 * 60_000): Promise<{ callId: string; callSid: string }> {
    const startedAt = new Date(Date.now() - quietForMs - 5_000);
    const { input, rawToken } = inboundCallInput(organizationId, agentId, { twilioAccountSid: twilio.accountSid, at: startedAt, streamTokenExpiresAt: new Date(startedAt.getTime() + 60_000) });
    const call = await server.app.get(CallAdmissionService).recordInbound(input);
    const claim = await server.app.get(CallStreamRepository).claimMediaStream({ callId: call.id, tokenHash: hashSecret(rawToken), streamSid: `MZ${'0'.repeat(32)}`, now: new Date(startedAt.getTime() + 1_000) });
    expect(claim.outcome).toBe('ok');
    twilio.addCall({ sid: input.twilioCallSid, status: 'in-progress', direction: 'inbound', from: input.fromNumber, to: input.toNumber });
    if (twilioStatus === 'completed') twilio.setCallStatus(input.twilioCallSid, 'completed', { duration: 42 });
    return { callId: call.id, callSid: input.twilioCallSid };
  }

  const detailOf = async (callId: string) => (await server.api(`/v1/calls/${callId}`)).body;

  it('ends a call Twilio still has live: hangs it up there, finalises it as reconciled and frees its slot', async () => {
    const { callId, callSid } = await abandonedCall('in-progress');
    expect(await server.app.get(CallReconciler).reconcileNow()).toBeGreaterThanOrEqual(1);
    const hangUps = twilio.requestsFor('update_call').filter((request) => request.callSid === callSid);
    expect(hangUps.map((request) => request.form['Status'])).toEqual(['completed']);
    const detail = await detailOf(callId);
    expect(detail).toMatchObject({ endReason: 'reconciled', status: 'completed' });
    expect(detail.events.find((event: { type: string }) => event.type === 'reconciled').payload).toMatchObject({ twilioStatus: 'completed', streamStarted: true });
    expect(detail.cost.status).toBe('priced');
    // Its slot is free: a call with an end no longer counts as live (LIVE_CALL_CONDITION). The
    // organization-wide activeCalls is not compared here: other spec files place calls in this
    // (default) organization at the same time, so its count moves under this test.
    expect(detail.endedAt).not.toBeNull();
    expect(detail.endReason).toBe('reconciled');
  });

  it("takes Twilio's word for a call that ended while nobody heard (a lost status callback): its status and duration", async () => {
    const { callId, callSid } = await abandonedCall('completed');
    await server.app.get(CallReconciler).reconcileNow();
    expect(twilio.requestsFor('update_call').filter((request) => request.callSid === callSid)).toEqual([]);
    const detail = await detailOf(callId);
    expect(detail).toMatchObject({ endReason: 'reconciled', status: 'completed', durationSeconds: 42 });
  });

  it('leaves alone a call this process carries: its heartbeat keeps it fresh past the bound', async () => {
    const { number } = await bindAgent(server, { engine: 'echo', config: {} });
    const call = callTo(server, number);
    const twiml = await call.dial();
    const callId = twiml.stream!.parameters['callId']!;
    await call.connectMedia();
    // Longer than CALL_RECONCILE_AFTER_MS of (echoed) conversation, then a pass.
    await call.streamAudio(encodeMulaw(sineTone({ frequencyHz: 300, sampleRate: 8000, durationMs: 6_500, amplitudeDbfs: -20 })));
    await server.app.get(CallReconciler).reconcileNow();
    expect((await detailOf(callId)).endReason).toBeNull();
    await call.hangup();
    const ended = await eventually(() => detailOf(callId), (body) => body.endReason !== null, 10_000);
    expect(ended.endReason).toBe('stream_stopped');
  }, 30_000);

  it('is safe in every process at once: two reconcilers on one database end each call once', async () => {
    const { callId } = await abandonedCall('in-progress');
    const app = server.app;
    // A second process's reconciler: its own instance over the same database and Twilio.
    const other = new CallReconciler(app.get(APP_CONFIG), app.get(CallStreamRepository), app.get(CallEventRepository), app.get(CallEndService), app.get(TwilioAccountService), app.get(TwilioRestClientFactory));
    const [mine, theirs] = await Promise.all([app.get(CallReconciler).reconcileNow(), other.reconcileNow()]);
    expect(mine + theirs).toBeGreaterThanOrEqual(1);
    const detail = await detailOf(callId);
    expect(detail.endReason).toBe('reconciled');
    expect(detail.events.filter((event: { type: string }) => event.type === 'reconciled')).toHaveLength(1);
    expect(detail.cost.lines.filter((line: { kind: string }) => line.kind === 'charge').length).toBeGreaterThan(0);
    expect(await app.get(PrismaService).costLedgerLine.count({ where: { callId, kind: 'charge', component: 'telephony' } })).toBe(1);
  });
});
