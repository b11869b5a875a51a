import { hashSecret } from '../../../libs/persistence/src/secret-hash';
import { createRepositories, createTestPrisma, TEST_ACCOUNT_SID, uniqueCallSid, uniqueE164 } from '../../support/database';
import type { StreamClaim } from '../../../libs/persistence/src/repositories/call-stream.repository';
import { createInboundCall } from './call-fixtures';

/** The outcome alone: what the token checks are about. */
async function outcomeOf(claim: Promise<StreamClaim>): Promise<StreamClaim['outcome']> {
  return (await claim).outcome;
}

describe('CallRepository: creation, stream token, stream marks, finalise', () => {
  const prisma = createTestPrisma(10);
  const repos = createRepositories(prisma);

  afterAll(() => prisma.$disconnect());

  it('createInbound() stores the call and never returns the stream token hash', async () => {
    const at = new Date('2030-05-01T10:00:00.123Z');
    const { callId, input } = await createInboundCall(repos, { at });
    const call = await repos.calls.findById(callId);
    expect(call).toMatchObject({
      organizationId: input.organizationId,
      twilioCallSid: input.twilioCallSid,
      twilioAccountSid: TEST_ACCOUNT_SID,
      direction: 'inbound',
      fromNumber: input.fromNumber,
      toNumber: input.toNumber,
      agentId: input.agentId,
      agentConfigVersion: 1,
      status: 'ringing',
      startedAt: at,
      endedAt: null,
      endReason: null,
      statusTimeline: [{ status: 'ringing', at: at.toISOString(), sequenceNumber: null }],
    });
    expect(call).not.toHaveProperty('streamTokenHash');
    expect(JSON.stringify(call)).not.toContain(input.streamTokenHash);
  });

  it('createInbound() with a CallSid already recorded is a conflict and changes nothing', async () => {
    const { callSid, organizationId, agentId } = await createInboundCall(repos);
    const duplicate = createInboundCall(repos, { twilioCallSid: callSid, organizationId });
    await expect(duplicate).rejects.toMatchObject({ code: 'conflict', retryable: false });
    const rows = await prisma.call.findMany({ where: { twilioCallSid: callSid } });
    expect(rows).toHaveLength(1);
    expect(rows[0]?.agentId).toBe(agentId);
  });

  it('createInbound() for a retried webhook (same CallSid and agent, stream not started) reissues the token on the same call', async () => {
    const first = await createInboundCall(repos);
    const retryToken = 'retry-token-0123456789abcdefghijklmnopqrstuvwxyz';
    const retried = await repos.admission.recordInbound({ ...first.input, streamTokenHash: hashSecret(retryToken) });
    expect(retried.id).toBe(first.callId);
    // The first answer's token is void; the retry's works, once.
    await expect(
      outcomeOf(repos.callStreams.claimMediaStream({ callId: first.callId, tokenHash: hashSecret(first.rawToken), now: new Date(), streamSid: 'MZ1' })),
    ).resolves.toBe('mismatch');
    await expect(
      outcomeOf(repos.callStreams.claimMediaStream({ callId: first.callId, tokenHash: hashSecret(retryToken), now: new Date(), streamSid: 'MZ1' })),
    ).resolves.toBe('ok');
    // Once the stream started, the CallSid is taken for good.
    await expect(repos.admission.recordInbound({ ...first.input, streamTokenHash: hashSecret('late') })).rejects.toMatchObject({ code: 'conflict' });
  });

  it('createRejected() stores an unknown-number call with no organization, already finalised', async () => {
    const at = new Date('2030-05-01T11:00:00.000Z');
    const call = await repos.admission.recordRejected({
      twilioCallSid: uniqueCallSid(),
      twilioAccountSid: TEST_ACCOUNT_SID,
      fromNumber: uniqueE164(),
      toNumber: uniqueE164(),
      status: 'ringing',
      endReason: 'unknown_number',
      at,
    });
    expect(call).toMatchObject({ organizationId: null, agentId: null, endReason: 'unknown_number', endedAt: at, startedAt: at });
    // The first end reason wins: a later finalise cannot relabel it.
    await expect(repos.callEnds.finalise(call.id, { endReason: 'caller_hangup', endedAt: new Date() })).resolves.toBe(false);
    await expect(repos.calls.findById(call.id)).resolves.toMatchObject({ endReason: 'unknown_number', endedAt: at });
  });

  it('create* reject bad input with invalid_input', async () => {
    const base = { twilioAccountSid: TEST_ACCOUNT_SID, fromNumber: '+15550001', toNumber: '+15550002', endReason: 'x' };
    await expect(repos.admission.recordRejected({ ...base, twilioCallSid: ' ', status: 'ringing' })).rejects.toMatchObject({
      code: 'invalid_input',
    });
    await expect(repos.admission.recordRejected({ ...base, twilioCallSid: uniqueCallSid(), status: 'dancing' })).rejects.toMatchObject({
      code: 'invalid_input',
    });
  });

  describe('claimMediaStream()', () => {
    it('accepts the right token once, then reports reuse', async () => {
      const { callId, rawToken } = await createInboundCall(repos);
      const tokenHash = hashSecret(rawToken);
      await expect(outcomeOf(repos.callStreams.claimMediaStream({ callId, tokenHash, now: new Date(), streamSid: 'MZ1' }))).resolves.toBe('ok');
      await expect(outcomeOf(repos.callStreams.claimMediaStream({ callId, tokenHash, now: new Date(), streamSid: 'MZ1' }))).resolves.toBe('reused');
    });

    it('classifies wrong, expired and missing tokens without spending the real one', async () => {
      const { callId, rawToken, input } = await createInboundCall(repos);
      const tokenHash = hashSecret(rawToken);
      await expect(outcomeOf(repos.callStreams.claimMediaStream({ callId, tokenHash: hashSecret('guess'), now: new Date(), streamSid: 'MZ1' }))).resolves.toBe(
        'mismatch',
      );
      const afterExpiry = new Date(input.streamTokenExpiresAt.getTime() + 1);
      await expect(outcomeOf(repos.callStreams.claimMediaStream({ callId, tokenHash, now: afterExpiry, streamSid: 'MZ1' }))).resolves.toBe('expired');
      // Exactly at the expiry instant the token is already dead (expires_at > now is required).
      await expect(outcomeOf(repos.callStreams.claimMediaStream({ callId, tokenHash, now: input.streamTokenExpiresAt, streamSid: 'MZ1' }))).resolves.toBe('expired');
      await expect(
        outcomeOf(repos.callStreams.claimMediaStream({ callId: '00000000-0000-4000-8000-000000000000', tokenHash, now: new Date(), streamSid: 'MZ1' })),
      ).resolves.toBe('missing');
      await expect(outcomeOf(repos.callStreams.claimMediaStream({ callId: 'nonsense', tokenHash, now: new Date(), streamSid: 'MZ1' }))).resolves.toBe('missing');
      // None of the refusals spent it.
      await expect(outcomeOf(repos.callStreams.claimMediaStream({ callId, tokenHash, now: new Date(), streamSid: 'MZ1' }))).resolves.toBe('ok');
    });

    it('a call created without a token (rejected call) reports missing', async () => {
      const call = await repos.admission.recordRejected({
        twilioCallSid: uniqueCallSid(),
        twilioAccountSid: TEST_ACCOUNT_SID,
        fromNumber: uniqueE164(),
        toNumber: uniqueE164(),
        status: 'ringing',
        endReason: 'unknown_number',
      });
      await expect(outcomeOf(repos.callStreams.claimMediaStream({ callId: call.id, tokenHash: hashSecret('x'), now: new Date(), streamSid: 'MZ1' }))).resolves.toBe(
        'missing',
      );
    });

    it('of N concurrent sockets presenting the same token exactly one wins', async () => {
      const { callId, rawToken } = await createInboundCall(repos);
      const tokenHash = hashSecret(rawToken);
      const attempts = 12;
      const outcomes = await Promise.all(
        Array.from({ length: attempts }, () => outcomeOf(repos.callStreams.claimMediaStream({ callId, tokenHash, now: new Date(), streamSid: 'MZ1' }))),
      );
      expect(outcomes.filter((o) => o === 'ok')).toHaveLength(1);
      expect(outcomes.filter((o) => o === 'reused')).toHaveLength(attempts - 1);
    });
  });

  it('claimMediaStream() records the first start and returns the agent context the call was answered with', async () => {
    const { callId, organizationId, agentId, rawToken } = await createInboundCall(repos);
    // The agent's config moves on after the call was answered: the call keeps version 1.
    await repos.agents.updateConfig(organizationId, agentId, { greeting: 'v2' });
    const at = new Date();
    const claim = await repos.callStreams.claimMediaStream({ callId, tokenHash: hashSecret(rawToken), streamSid: 'MZ1', now: at });
    const call = await repos.calls.findById(callId);
    expect(claim).toEqual({
      outcome: 'ok',
      context: {
        callId,
        organizationId,
        agentId,
        agentEngine: 'echo',
        agentConfigVersion: 1,
        agentConfig: { greeting: 'hi' },
        // What the agent needs to know about the call: who is calling, and the clock's origin.
        twilioCallSid: call!.twilioCallSid,
        twilioAccountSid: TEST_ACCOUNT_SID,
        fromNumber: call!.fromNumber,
        toNumber: call!.toNumber,
        startedAt: call!.startedAt,
        // Inbound calls have no per-call variables and no answering-machine verdict.
        variables: {},
        answeredBy: null,
        // Only outbound calls placed with a voicemail have one.
        voicemailMessage: null,
        // Not a scenario test's call.
        testRunId: null,
        // The live-calls gauge's label.
        direction: 'inbound',
      },
    });
    expect(call).toMatchObject({ twilioStreamSid: 'MZ1', streamStartedAt: at });
  });

  it('claimMediaStream() gives a call only to a socket signed by its own Twilio account, and a refusal spends nothing', async () => {
    // An organization's own account: its calls stream on its account path, never on the operator's or another's.
    const tenantAccount = `AC${'7'.repeat(32)}`;
    const otherAccount = `AC${'8'.repeat(32)}`;
    const { callId, organizationId, rawToken } = await createInboundCall(repos, { twilioAccountSid: tenantAccount });
    await prisma.organizationTwilioAccount.create({ data: { organizationId, accountSid: tenantAccount, keyId: 'k', nonce: Buffer.alloc(12), ciphertext: Buffer.alloc(16) } });
    try {
      const claim = (account: Parameters<typeof repos.callStreams.claimMediaStream>[0]['account']) =>
        outcomeOf(repos.callStreams.claimMediaStream({ callId, tokenHash: hashSecret(rawToken), streamSid: 'MZ1', now: new Date(), account }));
      await expect(claim({ kind: 'operator' })).resolves.toBe('wrong_account');
      await expect(claim({ kind: 'organization', accountSid: otherAccount })).resolves.toBe('wrong_account');
      await expect(repos.calls.findById(callId)).resolves.toMatchObject({ streamStartedAt: null });
      await expect(claim({ kind: 'organization', accountSid: tenantAccount })).resolves.toBe('ok');
    } finally {
      await prisma.organizationTwilioAccount.delete({ where: { organizationId } });
    }
    // The operator's account streams the calls of accounts no organization registered.
    const operatorCall = await createInboundCall(repos);
    await expect(
      outcomeOf(repos.callStreams.claimMediaStream({ callId: operatorCall.callId, tokenHash: hashSecret(operatorCall.rawToken), streamSid: 'MZ2', now: new Date(), account: { kind: 'organization', accountSid: otherAccount } })),
    ).resolves.toBe('wrong_account');
    await expect(
      outcomeOf(repos.callStreams.claimMediaStream({ callId: operatorCall.callId, tokenHash: hashSecret(operatorCall.rawToken), streamSid: 'MZ2', now: new Date(), account: { kind: 'operator' } })),
    ).resolves.toBe('ok');
  });

  it('markStreamEnded() keeps the first end', async () => {
    const { callId } = await createInboundCall(repos);
    const first = new Date('2030-05-01T10:05:00.000Z');
    await expect(repos.callStreams.markStreamEnded(callId, first)).resolves.toBe(true);
    await expect(repos.callStreams.markStreamEnded(callId, new Date('2030-05-01T10:06:00.000Z'))).resolves.toBe(false);
    await expect(repos.calls.findById(callId)).resolves.toMatchObject({ streamEndedAt: first });
  });

  it('finalise() is idempotent: the first end reason wins, concurrent callers included', async () => {
    const { callId } = await createInboundCall(repos);
    const endedAt = new Date('2030-05-01T10:10:00.000Z');
    const reasons = ['caller_hangup', 'agent_hangup', 'stream_stopped', 'error'];
    const applied = await Promise.all(
      reasons.map((endReason, i) => repos.callEnds.finalise(callId, { endReason, endedAt: new Date(endedAt.getTime() + i * 1000) })),
    );
    expect(applied.filter(Boolean)).toHaveLength(1);
    const winner = reasons[applied.indexOf(true)];
    const call = await repos.calls.findById(callId);
    expect(call?.endReason).toBe(winner);
    await expect(repos.callEnds.finalise(callId, { endReason: 'late', endedAt: new Date() })).resolves.toBe(false);
    expect((await repos.calls.findById(callId))?.endReason).toBe(winner);
    await expect(repos.callEnds.finalise(callId, { endReason: ' ', endedAt })).rejects.toMatchObject({ code: 'invalid_input' });
    await expect(repos.callEnds.finalise('nope', { endReason: 'x', endedAt })).resolves.toBe(false);
  });
});
