import { NO_MEASURED_USAGE, type PriceCatalogPrices } from '../../../libs/billing/src';
import { hashSecret } from '../../../libs/persistence/src/secret-hash';
import { CostFixtures, LONG_AGO, secondsAfter } from '../../support/cost-fixtures';
import { createTestPrisma, TEST_ACCOUNT_SID, uniqueE164 } from '../../support/database';

/** Telephony only, $0.10 a minute: a call's total is its started minutes × 100 000 µ$. */
const BUDGET_PRICES = { telephonyInboundPerMinute: 100_000 } satisfies PriceCatalogPrices;
const BUDGET = 1_000_000;

/** Priced lines: telephony, media stream and speech recognition. */
const REPORT_PRICES = { telephonyInboundPerMinute: 10_000, mediaStreamsPerMinute: 3_000, sttPerAudioMinute: 6_000 } satisfies PriceCatalogPrices;

const MARCH = (day: number, hour = 10) => new Date(Date.UTC(2031, 2, day, hour));

describe('Cost ledger: monthly budgets, hard limit, usage report', () => {
  const prisma = createTestPrisma(10);
  const fx = new CostFixtures(prisma);
  afterAll(() => prisma.$disconnect());

  async function budgetedOrganization(budget: { hardLimit: boolean }) {
    const organizationId = await fx.organization();
    const agentId = await fx.agent(organizationId);
    await fx.insertCatalog({ organizationId, version: 1, prices: BUDGET_PRICES, effectiveFrom: LONG_AGO });
    await expect(fx.costs.setBudget(organizationId, { monthlyBudgetMicros: BUDGET, hardLimit: budget.hardLimit })).resolves.toBe(true);
    return { organizationId, agentId };
  }

  /** The organization's usage.threshold data, by month then threshold (events of one transaction share a timestamp). */
  const thresholdEvents = async (organizationId: string) =>
    (await fx.eventData(organizationId, 'usage.threshold')).sort(
      (a, b) => String(a['month']).localeCompare(String(b['month'])) || Number(a['thresholdPercent']) - Number(b['thresholdPercent']),
    );
  const alerts = (organizationId: string) => prisma.budgetAlert.findMany({ where: { organizationId }, orderBy: [{ month: 'asc' }, { threshold: 'asc' }] });

  describe('usage.threshold', () => {
    it('announces at once the thresholds a newly set budget is already past, and only once', async () => {
      const organizationId = await fx.organization();
      const agentId = await fx.agent(organizationId);
      await fx.insertCatalog({ organizationId, version: 1, prices: BUDGET_PRICES, effectiveFrom: LONG_AGO });
      await fx.endedCall({ organizationId, agentId, startedAt: MARCH(2), seconds: 9 * 60 }); // 900 000 spent in March 2031

      await expect(fx.costs.setBudget(organizationId, { monthlyBudgetMicros: 1_000_000 }, MARCH(10))).resolves.toBe(true); // 90%
      await expect(thresholdEvents(organizationId)).resolves.toEqual([
        expect.objectContaining({ month: '2031-03', thresholdPercent: 80, spentMicros: 900_000, budgetMicros: 1_000_000 }),
      ]);
      await fx.costs.setBudget(organizationId, { monthlyBudgetMicros: 850_000 }, MARCH(11)); // past 100% now; 80% already said
      await fx.costs.setBudget(organizationId, { monthlyBudgetMicros: 800_000, hardLimit: true }, MARCH(12));
      expect((await thresholdEvents(organizationId)).map((data) => [data['thresholdPercent'], data['budgetMicros'], data['newCallsRefused']])).toEqual([
        [80, 1_000_000, false],
        [100, 850_000, false],
      ]);
      await expect(fx.costs.setBudget('00000000-0000-4000-8000-000000000000', { monthlyBudgetMicros: 1 })).resolves.toBe(false);
    });

    it('announces 80% and 100% of a month once each, as the spend reaches them', async () => {
      const { organizationId, agentId } = await budgetedOrganization({ hardLimit: false });
      const call = (day: number, minutes: number) => fx.endedCall({ organizationId, agentId, startedAt: MARCH(day), seconds: minutes * 60 });

      await call(1, 7); // 700 000: 70%
      await expect(thresholdEvents(organizationId)).resolves.toEqual([]);
      await call(2, 1); // 800 000: exactly 80%
      await call(3, 2); // 1 000 000: exactly 100%
      await call(4, 1); // 1 100 000: both already announced
      const { callSid } = await call(5, 1); // 1 200 000
      await fx.completed(callSid, MARCH(5, 11), { billedMinutes: 2 }); // + 100 000 correction: 1 300 000

      const base = { month: '2031-03', currency: 'USD', budgetMicros: BUDGET, budget: '1.000000', hardLimit: false, newCallsRefused: false };
      await expect(thresholdEvents(organizationId)).resolves.toEqual([
        { ...base, thresholdPercent: 80, spentMicros: 800_000, spent: '0.800000' },
        { ...base, thresholdPercent: 100, spentMicros: 1_000_000, spent: '1.000000' },
      ]);
      expect((await alerts(organizationId)).map((row) => [row.month.toISOString().slice(0, 10), row.threshold, Number(row.spentMicros), Number(row.budgetMicros)])).toEqual([
        ['2031-03-01', 80, 800_000, BUDGET],
        ['2031-03-01', 100, 1_000_000, BUDGET],
      ]);
      await expect(fx.costs.budgetStatus(organizationId, MARCH(20))).resolves.toEqual({
        monthStart: new Date('2031-03-01T00:00:00.000Z'), spentMicros: 1_300_000, budgetMicros: BUDGET, hardLimit: false, currency: 'USD',
      });

      // A new month starts from nothing: 7 minutes in April are 70%; Twilio's 8 billed minutes (+100 000) make it 80%.
      const aprilStart = new Date('2031-04-01T00:00:00.000Z');
      const aprilCall = await fx.endedCall({ organizationId, agentId, startedAt: aprilStart, seconds: 7 * 60 });
      expect((await thresholdEvents(organizationId)).filter((event) => event['month'] === '2031-04')).toEqual([]);
      await fx.completed(aprilCall.callSid, secondsAfter(aprilStart, 7 * 60), { billedMinutes: 8 });
      const april = (await thresholdEvents(organizationId)).filter((event) => event['month'] === '2031-04');
      expect(april).toEqual([{ ...base, month: '2031-04', thresholdPercent: 80, spentMicros: 800_000, spent: '0.800000' }]);
    });

    it('calls ending together neither deadlock nor lose a crossing that only their sum makes', async () => {
      const { organizationId, agentId } = await budgetedOrganization({ hardLimit: false });
      const calls = await Promise.all([1, 2, 3].map((day) => fx.startInbound({ organizationId, agentId, startedAt: MARCH(day) })));

      const ended = await Promise.all(
        calls.map(({ callId }, index) =>
          fx.repos.callEnds.finalise(callId, { endReason: 'caller_hangup', endedAt: secondsAfter(MARCH(index + 1), 180), usage: NO_MEASURED_USAGE }),
        ),
      );

      expect(ended).toEqual([true, true, true]);
      // 3 × 3 minutes × 100 000 = 900 000: only the last of the three to commit reaches 80%, and it saw the other two.
      const events = await thresholdEvents(organizationId);
      expect(events.map((event) => [event['thresholdPercent'], event['spentMicros']])).toEqual([[80, 900_000]]);
      await expect(alerts(organizationId)).resolves.toHaveLength(1);
    });
  });

  describe('hard limit at admission', () => {
    const inbound = (organizationId: string, agentId: string, startedAt: Date, twilioCallSid?: string) => {
      const { input, rawToken } = fx.inboundInput({ organizationId, agentId, startedAt });
      const withSid = twilioCallSid === undefined ? input : { ...input, twilioCallSid };
      return { input: withSid, rawToken, admit: () => fx.repos.admission.admitInbound(withSid) };
    };
    const outbound = (organizationId: string, agentId: string, at: Date) =>
      fx.repos.admission.reserveOutbound({
        organizationId, agentId, agentConfigVersion: 1, twilioAccountSid: TEST_ACCOUNT_SID, fromNumber: uniqueE164(), toNumber: uniqueE164(),
        variables: {}, machineDetection: null, at,
      });
    const refusals = (organizationId: string) => prisma.callRefusal.findMany({ where: { organizationId }, orderBy: { id: 'asc' } });

    it('refuses inbound (stored as budget_exceeded) and outbound (not stored) once the month is spent, and admits again under a soft limit', async () => {
      const { organizationId, agentId } = await budgetedOrganization({ hardLimit: true });
      const first = inbound(organizationId, agentId, MARCH(1));
      const admitted = await first.admit();
      if (!admitted.admitted) throw new Error('the first call should be admitted: nothing spent yet');
      await fx.repos.callStreams.claimMediaStream({ callId: admitted.call.id, tokenHash: hashSecret(first.rawToken), streamSid: 'MZcost', now: MARCH(1) });
      await fx.repos.callEnds.finalise(admitted.call.id, { endReason: 'caller_hangup', endedAt: secondsAfter(MARCH(1), 600), usage: NO_MEASURED_USAGE });
      // 10 minutes × 100 000 = the whole budget, announced with the hard limit's consequence.
      const hundred = (await thresholdEvents(organizationId)).find((event) => event['thresholdPercent'] === 100);
      expect(hundred).toMatchObject({ spentMicros: BUDGET, hardLimit: true, newCallsRefused: true });

      const refused = inbound(organizationId, agentId, MARCH(2));
      const refusal = await refused.admit();
      expect(refusal).toEqual({
        admitted: false,
        reason: 'budget_exceeded',
        budget: { monthStart: new Date('2031-03-01T00:00:00.000Z'), spentMicros: BUDGET, budgetMicros: BUDGET, hardLimit: true, currency: 'USD' },
      });
      const stored = await prisma.call.findUniqueOrThrow({ where: { twilioCallSid: refused.input.twilioCallSid } });
      expect(stored).toMatchObject({ organizationId, endReason: 'budget_exceeded', endedAt: MARCH(2), startedAt: MARCH(2) });
      // Twilio retrying the refused webhook gets the same answer, counted once.
      await expect(inbound(organizationId, agentId, MARCH(2), refused.input.twilioCallSid).admit()).resolves.toMatchObject({ admitted: false, reason: 'budget_exceeded' });

      const outboundRefusal = await outbound(organizationId, agentId, MARCH(3));
      expect(outboundRefusal).toMatchObject({ admitted: false, reason: 'budget_exceeded' });
      await expect(prisma.call.count({ where: { organizationId, direction: 'outbound' } })).resolves.toBe(0);
      expect(await refusals(organizationId)).toEqual([
        expect.objectContaining({ direction: 'inbound', reason: 'budget_exceeded', fromNumber: refused.input.fromNumber, toNumber: refused.input.toNumber, limit: null, activeCalls: null, at: MARCH(2) }),
        expect.objectContaining({ direction: 'outbound', reason: 'budget_exceeded', limit: null, activeCalls: null, at: MARCH(3) }),
      ]);

      // Over budget without a hard limit: only announced, never refused.
      await fx.costs.setBudget(organizationId, { hardLimit: false });
      await expect(inbound(organizationId, agentId, MARCH(4)).admit()).resolves.toMatchObject({ admitted: true });
      await expect(outbound(organizationId, agentId, MARCH(4))).resolves.toMatchObject({ admitted: true });
      await expect(refusals(organizationId)).resolves.toHaveLength(2);
    });
  });

  describe('CostRepository.usage()', () => {
    const from = new Date('2031-02-10T00:00:00.000Z');
    const to = new Date('2031-02-12T00:00:00.000Z');

    it('groups the window [from, to) of one organization by agent, day and component, corrections included', async () => {
      const organizationId = await fx.organization();
      await fx.insertCatalog({ organizationId, version: 1, prices: REPORT_PRICES, effectiveFrom: LONG_AGO });
      const alice = await fx.agent(organizationId, 'Alice');
      const bob = await fx.agent(organizationId, 'Bob');
      const call = (agentId: string, startedAt: string, seconds: number, streamMs: number, sttAudioMs: number) =>
        fx.endedCall({ organizationId, agentId, startedAt: new Date(startedAt), seconds, usage: { streamMs, sttAudioMs } });

      // 2 min × 10 000 + 2 min × 3 000 + 30 000 ms × 6 000 / 60 000 = 20 000 + 6 000 + 3 000 = 29 000
      await call(alice, '2031-02-10T00:00:00.000Z', 61, 61_000, 30_000);
      // 1 min × 10 000 + 1 min × 3 000 + 10 000 ms × 6 000 / 60 000 = 10 000 + 3 000 + 1 000 = 14 000
      await call(alice, '2031-02-10T23:59:59.999Z', 30, 30_000, 10_000);
      // 2 × 10 000 + 2 × 3 000 + 6 000 = 32 000, then Twilio bills 3 minutes: +1 × 10 000 = 42 000
      const corrected = await call(bob, '2031-02-11T12:00:00.000Z', 120, 120_000, 60_000);
      await fx.completed(corrected.callSid, new Date('2031-02-11T12:02:00.000Z'), { billedMinutes: 3 });
      // Outside the window: `to` itself, and the instant before `from`.
      await call(bob, '2031-02-12T00:00:00.000Z', 60, 60_000, 60_000);
      await call(alice, '2031-02-09T23:59:59.999Z', 60, 60_000, 60_000);
      // Another organization's call inside the window.
      const other = await fx.organization();
      await fx.endedCall({ organizationId: other, agentId: await fx.agent(other, 'Mallory'), startedAt: new Date('2031-02-10T12:00:00.000Z'), seconds: 600 });

      const report = (groupBy: 'agent' | 'day' | 'component') => fx.costs.usage({ organizationId, from, to, groupBy });
      const row = { currency: 'USD', quantity: null, unit: null };
      const totals = [{ currency: 'USD', calls: 3, amountMicros: 29_000 + 14_000 + 42_000 }];

      await expect(report('agent')).resolves.toEqual({
        from, to, groupBy: 'agent', totals,
        rows: [
          { ...row, group: alice, label: 'Alice', calls: 2, amountMicros: 43_000 },
          { ...row, group: bob, label: 'Bob', calls: 1, amountMicros: 42_000 },
        ],
      });
      await expect(report('day')).resolves.toMatchObject({
        totals,
        rows: [
          { ...row, group: '2031-02-10', label: null, calls: 2, amountMicros: 43_000 },
          { ...row, group: '2031-02-11', label: null, calls: 1, amountMicros: 42_000 },
        ],
      });
      await expect(report('component')).resolves.toMatchObject({
        totals,
        rows: [
          // 2 + 1 + 2 charged + 1 corrected minutes; 20 000 + 10 000 + 20 000 + 10 000
          { group: 'telephony', label: null, currency: 'USD', calls: 3, quantity: 6, unit: 'minute', amountMicros: 60_000 },
          // 2 + 1 + 2 minutes; 6 000 + 3 000 + 6 000
          { group: 'media_streams', label: null, currency: 'USD', calls: 3, quantity: 5, unit: 'minute', amountMicros: 15_000 },
          // 30 000 + 10 000 + 60 000 ms; 3 000 + 1 000 + 6 000
          { group: 'stt', label: null, currency: 'USD', calls: 3, quantity: 100_000, unit: 'audio_ms', amountMicros: 10_000 },
        ],
      });
    });

    it('keeps one total per currency when the catalog changed currency', async () => {
      const organizationId = await fx.organization();
      const agentId = await fx.agent(organizationId);
      await fx.insertCatalog({ organizationId, version: 1, prices: { telephonyInboundPerMinute: 10_000 }, effectiveFrom: LONG_AGO });
      // Written directly: the repository keeps an organization's currency, but a report must still cope with two.
      await fx.insertCatalog({ organizationId, version: 2, currency: 'EUR', prices: { telephonyInboundPerMinute: 20_000 }, effectiveFrom: new Date('2031-05-01T00:00:00.000Z') });
      await fx.endedCall({ organizationId, agentId, startedAt: new Date('2031-04-30T23:59:00.000Z'), seconds: 60 }); // 1 × 10 000 USD
      await fx.endedCall({ organizationId, agentId, startedAt: new Date('2031-05-01T00:00:00.000Z'), seconds: 61 }); // 2 × 20 000 EUR

      const report = await fx.costs.usage({ organizationId, from: new Date('2031-04-01T00:00:00Z'), to: new Date('2031-06-01T00:00:00Z'), groupBy: 'day' });
      expect(report.totals).toEqual([
        { currency: 'EUR', calls: 1, amountMicros: 40_000 },
        { currency: 'USD', calls: 1, amountMicros: 10_000 },
      ]);
      expect(report.rows.map((r) => [r.group, r.currency, r.amountMicros])).toEqual([
        ['2031-04-30', 'USD', 10_000],
        ['2031-05-01', 'EUR', 40_000],
      ]);
    });
  });
});
