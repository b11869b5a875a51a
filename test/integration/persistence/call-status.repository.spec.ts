import { createRepositories, createTestPrisma, uniqueCallSid } from '../../support/database';
import { createInboundCall } from './call-fixtures';

describe('CallRepository.applyStatusCallback()', () => {
  const prisma = createTestPrisma(10);
  const repos = createRepositories(prisma);

  afterAll(() => prisma.$disconnect());

  const t = (second: number) => new Date(Date.UTC(2030, 4, 1, 12, 0, second));

  it('applies callbacks in order: status, answeredAt, endedAt, durations', async () => {
    const { callId, callSid } = await createInboundCall(repos);
    await repos.callEnds.applyStatusCallback({ twilioCallSid: callSid, status: 'ringing', sequenceNumber: 0, at: t(0) });
    await repos.callEnds.applyStatusCallback({ twilioCallSid: callSid, status: 'in-progress', sequenceNumber: 1, at: t(2) });
    expect((await repos.calls.findById(callId))?.status).toBe('in-progress');
    await repos.callEnds.applyStatusCallback({
      twilioCallSid: callSid,
      status: 'completed',
      sequenceNumber: 2,
      callDurationSeconds: 58,
      billedMinutes: 1,
      at: t(60),
    });
    const call = await repos.calls.findById(callId);
    expect(call).toMatchObject({
      status: 'completed',
      lastStatusSequence: 2,
      answeredAt: t(2),
      endedAt: t(60),
      durationSeconds: 58,
      billedMinutes: 1,
    });
    expect(call?.statusTimeline.map((e) => e.status)).toEqual(['ringing', 'ringing', 'in-progress', 'completed']);
  });

  it('out of order (completed first): final status stays completed, answeredAt still recorded, timeline keeps all', async () => {
    const { callId, callSid } = await createInboundCall(repos);
    const found = await repos.callEnds.applyStatusCallback({
      twilioCallSid: callSid,
      status: 'completed',
      sequenceNumber: 3,
      callDurationSeconds: 30,
      billedMinutes: 1,
      at: t(40),
    });
    expect(found).toBe(true);
    await repos.callEnds.applyStatusCallback({ twilioCallSid: callSid, status: 'in-progress', sequenceNumber: 2, at: t(10) });
    await repos.callEnds.applyStatusCallback({ twilioCallSid: callSid, status: 'ringing', sequenceNumber: 1, at: t(5) });

    const call = await repos.calls.findById(callId);
    expect(call).toMatchObject({
      status: 'completed',
      lastStatusSequence: 3,
      answeredAt: t(10),
      endedAt: t(40),
      durationSeconds: 30,
      billedMinutes: 1,
    });
    // Sorted by sequence number whatever the arrival order; the webhook's entry (no sequence) first.
    expect(call?.statusTimeline).toEqual([
      { status: 'ringing', at: expect.any(String), sequenceNumber: null },
      { status: 'ringing', at: t(5).toISOString(), sequenceNumber: 1 },
      { status: 'in-progress', at: t(10).toISOString(), sequenceNumber: 2 },
      { status: 'completed', at: t(40).toISOString(), sequenceNumber: 3 },
    ]);
  });

  it('concurrent callbacks all land in the timeline and the highest sequence number wins', async () => {
    const { callId, callSid } = await createInboundCall(repos);
    const statuses = ['initiated', 'ringing', 'in-progress', 'completed'] as const;
    await Promise.all(
      [...statuses].reverse().map((status) =>
        repos.callEnds.applyStatusCallback({ twilioCallSid: callSid, status, sequenceNumber: statuses.indexOf(status), at: t(statuses.indexOf(status)) }),
      ),
    );
    const call = await repos.calls.findById(callId);
    expect(call?.status).toBe('completed');
    expect(call?.statusTimeline).toHaveLength(1 + statuses.length);
    expect(call?.statusTimeline.slice(1).map((e) => e.sequenceNumber)).toEqual([0, 1, 2, 3]);
  });

  it('without sequence numbers a terminal status is never moved back to a non-terminal one', async () => {
    const { callId, callSid } = await createInboundCall(repos);
    await repos.callEnds.applyStatusCallback({ twilioCallSid: callSid, status: 'no-answer', at: t(30) });
    await repos.callEnds.applyStatusCallback({ twilioCallSid: callSid, status: 'ringing', at: t(31) });
    const call = await repos.calls.findById(callId);
    expect(call).toMatchObject({ status: 'no-answer', endedAt: t(30), answeredAt: null, lastStatusSequence: null });
    expect(call?.statusTimeline.map((e) => e.status)).toEqual(['ringing', 'no-answer', 'ringing']);
  });

  it('a stale sequence number never overrides a newer one, even if non-terminal to non-terminal', async () => {
    const { callId, callSid } = await createInboundCall(repos);
    await repos.callEnds.applyStatusCallback({ twilioCallSid: callSid, status: 'in-progress', sequenceNumber: 5, at: t(5) });
    await repos.callEnds.applyStatusCallback({ twilioCallSid: callSid, status: 'ringing', sequenceNumber: 4, at: t(4) });
    await expect(repos.calls.findById(callId)).resolves.toMatchObject({ status: 'in-progress', lastStatusSequence: 5 });
  });

  it('answeredAt keeps the earliest in-progress time; endedAt keeps the earliest end (finalise or terminal status)', async () => {
    const { callId, callSid } = await createInboundCall(repos);
    await repos.callEnds.applyStatusCallback({ twilioCallSid: callSid, status: 'in-progress', at: t(9) });
    await repos.callEnds.applyStatusCallback({ twilioCallSid: callSid, status: 'in-progress', at: t(7) });
    await repos.callEnds.finalise(callId, { endReason: 'caller_hangup', endedAt: t(50) });
    await repos.callEnds.applyStatusCallback({ twilioCallSid: callSid, status: 'completed', at: t(52) });
    await expect(repos.calls.findById(callId)).resolves.toMatchObject({
      answeredAt: t(7),
      endedAt: t(50),
      status: 'completed',
      endReason: 'caller_hangup',
    });
  });

  it('returns false for an unknown CallSid and rejects malformed input without writing', async () => {
    await expect(repos.callEnds.applyStatusCallback({ twilioCallSid: uniqueCallSid(), status: 'completed', at: t(1) })).resolves.toBe(false);
    const { callId, callSid } = await createInboundCall(repos);
    await expect(repos.callEnds.applyStatusCallback({ twilioCallSid: callSid, status: 'exploded', at: t(1) })).rejects.toMatchObject({
      code: 'invalid_input',
    });
    await expect(
      repos.callEnds.applyStatusCallback({ twilioCallSid: callSid, status: 'completed', sequenceNumber: -1, at: t(1) }),
    ).rejects.toMatchObject({ code: 'invalid_input' });
    await expect(repos.calls.findById(callId)).resolves.toMatchObject({ status: 'ringing' });
  });
});
