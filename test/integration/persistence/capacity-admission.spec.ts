import { randomBytes } from 'node:crypto';
import { CallAdmissionService } from '../../../apps/server/src/call-lifecycle/call-admission.service';
import { ComputeCapacity } from '../../../apps/server/src/inference/capacity/compute-capacity';
import type { InferenceCapacityService } from '../../../apps/server/src/inference/capacity/inference-capacity.service';
import { TransactionRunner } from '../../../libs/persistence/src';
import { hashSecret } from '../../../libs/persistence/src/secret-hash';
import { createRepositories, createTestOrganization, createTestPrisma, inboundCallInput, TEST_ACCOUNT_SID, TEST_CONCURRENCY_POLICY, uniqueE164 } from '../../support/database';

/**
 * Admission by inference capacity, on the real admission transactions: a capacity measured at
 * 0.2 worker-seconds per call-second on 2 workers at maxUtilisation 0.8 carries 8 calls; with 5
 * already live, 3 more are admitted and the rest refused with reason 'capacity', counted like any
 * refusal. Capacity is checked after the organization's own limits, so a call they refuse reserves none.
 */
describe('Admission by inference capacity', () => {
  const prisma = createTestPrisma(10);
  const repos = createRepositories(prisma);
  afterAll(() => prisma.$disconnect());

  /** A capacity already measured: `live` calls live, 0.2 worker-seconds per call-second, 2 workers. */
  function measuredCapacity(live: number): ComputeCapacity {
    let nowMs = 0;
    const capacity = new ComputeCapacity({ maxUtilisation: 0.8, now: () => nowMs });
    capacity.setWorkers(2);
    capacity.tick(live);
    for (let second = 0; second < 20; second++) {
      capacity.batchRan('whisper-base.en', live * 200);
      nowMs += 1000;
      capacity.tick(live);
    }
    return capacity;
  }

  function admissionWith(capacity: ComputeCapacity, policy = TEST_CONCURRENCY_POLICY): CallAdmissionService {
    const service = { tryAdmit: () => capacity.tryAdmit(), snapshot: () => capacity.snapshot() } as unknown as InferenceCapacityService;
    return new CallAdmissionService(new TransactionRunner(prisma), repos.calls, repos.outbox, policy, undefined, service);
  }

  async function organizationWithAgent(): Promise<{ organizationId: string; agentId: string }> {
    const { id: organizationId } = await createTestOrganization(repos, 'capacity');
    const agent = await repos.agents.create({ organizationId, name: 'capacity agent', engine: 'echo', config: { greeting: 'hi' } });
    return { organizationId, agentId: agent.id };
  }

  it('admits inbound calls arriving together up to the capacity and refuses the rest for it, counted and stored', async () => {
    const { organizationId, agentId } = await organizationWithAgent();
    const admission = admissionWith(measuredCapacity(5));
    const inputs = Array.from({ length: 6 }, () => inboundCallInput(organizationId, agentId).input);

    const outcomes = await Promise.all(inputs.map((input) => admission.admitInbound(input)));

    expect(outcomes.map((outcome) => (outcome.admitted ? 'admitted' : outcome.reason))).toEqual(['admitted', 'admitted', 'admitted', 'capacity', 'capacity', 'capacity']);
    expect(outcomes[3]).toEqual({
      admitted: false,
      reason: 'capacity',
      capacity: { workers: 2, maxUtilisation: 0.8, predictedUtilisation: expect.closeTo(0.8, 6), costPerCall: expect.closeTo(0.2, 6), liveCalls: 5, reservedCalls: 3 },
    });
    const refused = inputs.slice(3).map((input) => input.twilioCallSid);
    const stored = await prisma.call.findMany({ where: { twilioCallSid: { in: refused } } });
    expect(stored.map((call) => call.endReason)).toEqual(['capacity', 'capacity', 'capacity']);
    const refusals = await prisma.callRefusal.findMany({ where: { organizationId } });
    expect(refusals.map((row) => [row.direction, row.reason, row.limit, row.activeCalls])).toEqual([
      ['inbound', 'capacity', null, null],
      ['inbound', 'capacity', null, null],
      ['inbound', 'capacity', null, null],
    ]);

    // Twilio retrying a refused webhook is refused again for the same reason, and counted once.
    await expect(admission.admitInbound({ ...(inputs[3] as (typeof inputs)[number]), streamTokenHash: hashSecret(randomBytes(8).toString('hex')) })).resolves.toMatchObject({ admitted: false, reason: 'capacity' });
    await expect(prisma.callRefusal.count({ where: { organizationId } })).resolves.toBe(3);
  });

  it('refuses outbound and browser calls for capacity too', async () => {
    const { organizationId, agentId } = await organizationWithAgent();
    const admission = admissionWith(measuredCapacity(8));
    const outbound = await admission.reserveOutbound({
      organizationId, agentId, agentConfigVersion: 1, twilioAccountSid: TEST_ACCOUNT_SID, fromNumber: uniqueE164(), toNumber: uniqueE164(), variables: {}, machineDetection: null,
    });
    expect(outbound).toMatchObject({ admitted: false, reason: 'capacity', capacity: { liveCalls: 8, reservedCalls: 0 } });
    const web = await admission.admitWeb({ organizationId, agentId, agentConfigVersion: 1, variables: {}, streamTokenHash: hashSecret('web'), streamTokenExpiresAt: new Date(Date.now() + 60_000) });
    expect(web).toMatchObject({ admitted: false, reason: 'capacity' });
    const refusals = await prisma.callRefusal.findMany({ where: { organizationId }, orderBy: { id: 'asc' } });
    expect(refusals.map((row) => [row.direction, row.reason])).toEqual([
      ['outbound', 'capacity'],
      ['web', 'capacity'],
    ]);
    await expect(prisma.call.count({ where: { organizationId, endReason: null } })).resolves.toBe(0);
  });

  it('checks the organization\'s own limit first: a call it refuses takes no capacity', async () => {
    const { organizationId, agentId } = await organizationWithAgent();
    const capacity = measuredCapacity(5);
    const admission = admissionWith(capacity, { defaultLimit: 1, cap: 1000 });
    const outcomes = await Promise.all([0, 1, 2].map(() => admission.admitInbound(inboundCallInput(organizationId, agentId).input)));
    expect(outcomes.map((outcome) => (outcome.admitted ? 'admitted' : outcome.reason))).toEqual(['admitted', 'concurrency_limit', 'concurrency_limit']);
    expect(capacity.snapshot()).toMatchObject({ reservedCalls: 1, callsHeadroom: 2 });
  });

  it('admits everything while no cost is measured (no capacity service, or nothing measured yet)', async () => {
    const { organizationId, agentId } = await organizationWithAgent();
    const fresh = new ComputeCapacity({ maxUtilisation: 0.8 });
    fresh.setWorkers(1);
    const admission = admissionWith(fresh);
    const outcomes = await Promise.all(Array.from({ length: 5 }, () => admission.admitInbound(inboundCallInput(organizationId, agentId).input)));
    expect(outcomes.every((outcome) => outcome.admitted)).toBe(true);
  });
});
