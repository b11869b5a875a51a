import { callMetersSchema, NO_MEASURED_USAGE, priceCall, type MeasuredCallUsage, type PriceCatalogPrices } from '../../../libs/billing/src';
import { CostFixtures, LONG_AGO, secondsAfter } from '../../support/cost-fixtures';
import { CostLedger } from '../../../libs/persistence/src/billing/cost-ledger';
import { createTestPrisma, TEST_ACCOUNT_SID, uniqueCallSid, uniqueE164 } from '../../support/database';

/** The operator's prices for an organization (what its calls are billed with), in µ$ (prices left out are 0). */
const PRICES = {
  telephonyInboundPerMinute: 10_000,
  telephonyOutboundPerMinute: 20_000,
  mediaStreamsPerMinute: 3_000,
  sttPerAudioMinute: 6_000,
  ttsPerMillionCharacters: 15_000_000,
  ttsPerAudioMinute: 2_000,
  llmInputPerMillionTokens: 150_000,
  llmCachedInputPerMillionTokens: 75_000,
  llmOutputPerMillionTokens: 600_000,
  gpuPerSecond: 1_000,
} satisfies PriceCatalogPrices;

/** What the media path measured on a 61 s call (no realtime tokens, no CPU inference). */
const USAGE: MeasuredCallUsage = {
  ...NO_MEASURED_USAGE,
  streamMs: 61_000,
  callerAudioMs: 58_000,
  agentAudioSentMs: 30_000,
  agentAudioHeardMs: 28_000,
  sttAudioMs: 45_000,
  ttsCharacters: 1_200,
  ttsAudioMs: 30_000,
  llmInputTokens: 10_000,
  llmCachedInputTokens: 4_000,
  llmOutputTokens: 2_500,
  gpuMicroseconds: 2_345_678,
};

/** USAGE over 61 s priced with PRICES, worked out by hand. */
const CHARGED = {
  telephony: { quantity: 2, amountMicros: 20_000 }, // 61 s = 2 started minutes × 10 000
  media_streams: { quantity: 2, amountMicros: 6_000 }, // 61 000 ms = 2 started minutes × 3 000
  stt: { quantity: 45_000, amountMicros: 4_500 }, // 45 000 ms × 6 000 / 60 000
  tts_characters: { quantity: 1_200, amountMicros: 18_000 }, // 1 200 × 15 000 000 / 1 000 000
  tts_audio: { quantity: 30_000, amountMicros: 1_000 }, // 30 000 ms × 2 000 / 60 000
  llm_input: { quantity: 6_000, amountMicros: 900 }, // (10 000 − 4 000 cached) × 150 000 / 1M
  llm_cached_input: { quantity: 4_000, amountMicros: 300 }, // 4 000 × 75 000 / 1M
  llm_output: { quantity: 2_500, amountMicros: 1_500 }, // 2 500 × 600 000 / 1M
  gpu: { quantity: 2_345_678, amountMicros: 2_346 }, // 2.345678 s × 1 000 = 2 345.678, rounded half up
};
// 20 000 + 6 000 + 4 500 + 18 000 + 1 000 + 900 + 300 + 1 500 + 2 346
const CHARGED_TOTAL = 54_546;

describe('Cost ledger: pricing a call as it ends, catalog versions, Twilio corrections', () => {
  const prisma = createTestPrisma(10);
  const fx = new CostFixtures(prisma);
  afterAll(() => prisma.$disconnect());

  /** An organization with an agent and PRICES as its catalog version 1, in force long before its calls. */
  async function pricedOrganization(prices: PriceCatalogPrices = PRICES) {
    const organizationId = await fx.organization(['call.cost', 'call.ended']);
    const agentId = await fx.agent(organizationId);
    const catalogId = await fx.insertCatalog({ organizationId, version: 1, prices, effectiveFrom: LONG_AGO });
    return { organizationId, agentId, catalogId };
  }

  describe("whose prices bill a call", () => {
    it("bills with the operator's catalog; the organization's own catalog only re-prices the call for its report (ownPricing)", async () => {
      const { organizationId, agentId, catalogId } = await pricedOrganization();
      // The organization's own, far cheaper, prices: in force too, and newer than the operator's.
      const ownId = await fx.insertCatalog({ organizationId, version: 1, prices: { telephonyInboundPerMinute: 1 }, effectiveFrom: secondsAfter(LONG_AGO, 60), setBy: 'organization' });
      const startedAt = new Date('2031-03-01T10:00:00.000Z');
      const { callId } = await fx.endedCall({ organizationId, agentId, startedAt, seconds: 61, usage: USAGE });

      const cost = await fx.costs.callCost(organizationId, callId);
      expect(cost).toMatchObject({ catalog: { id: catalogId }, totalMicros: CHARGED_TOTAL });
      expect(cost!.ownPricing).toMatchObject({ catalog: { id: ownId, version: 1 }, currency: 'USD', totalMicros: 2 });
      expect(cost!.ownPricing!.lines).toEqual(priceCall(callMetersSchema.parse(cost!.meters), { telephonyInboundPerMinute: 1 }));
      // What calls starting now are billed with, and the organization's own versions beside it.
      expect(await fx.costs.catalogs(organizationId, startedAt)).toMatchObject({ inForce: { id: catalogId, setBy: 'operator' }, own: [{ id: ownId, setBy: 'organization' }] });
    });
  });

  describe('finalise()', () => {
    it('writes call_costs and one charge line per component in the transaction that ends the call', async () => {
      const organizationId = await fx.organization(['call.cost']);
      const agentId = await fx.agent(organizationId);
      const catalog = await fx.costs.createCatalogVersion({ organizationId, setBy: 'operator', prices: PRICES, effectiveFrom: new Date('2031-01-01T00:00:00Z') });
      expect(catalog).toMatchObject({ organizationId, version: 1, currency: 'USD' });
      const startedAt = new Date('2031-01-15T10:00:00.000Z');

      const { callId } = await fx.endedCall({ organizationId, agentId, startedAt, seconds: 61, usage: USAGE });

      await expect(fx.repos.calls.findById(callId)).resolves.toMatchObject({ endReason: 'caller_hangup', endedAt: secondsAfter(startedAt, 61) });
      const cost = await fx.callCostRow(callId);
      expect(cost).toMatchObject({ organizationId, agentId, callStartedAt: startedAt, catalogId: catalog.id, currency: 'USD', totalMicros: BigInt(CHARGED_TOTAL), correctedAt: null });
      expect(cost!.meters).toEqual({ ...USAGE, direction: 'inbound', engine: 'echo', measuredConnectedSeconds: 61, twilioBilledMinutes: null, analysisInputTokens: 0, analysisOutputTokens: 0 });
      await expect(fx.chargedByComponent(callId)).resolves.toEqual(CHARGED);
      const lines = await fx.ledger(callId);
      expect(lines).toHaveLength(9);
      for (const line of lines) expect(line).toMatchObject({ kind: 'charge', reason: null, catalogId: catalog.id, currency: 'USD' });
      expect(lines.find((line) => line.component === 'stt')).toMatchObject({ unit: 'audio_ms', unitPriceMicros: 6_000, unitSize: 60_000, pricePer: 'minute' });
      expect(lines.find((line) => line.component === 'gpu')).toMatchObject({ unit: 'microsecond', unitPriceMicros: 1_000, unitSize: 1_000_000, pricePer: 'second' });
      const events = await fx.eventData(organizationId, 'call.cost');
      expect(events).toEqual([
        expect.objectContaining({ callId, agentId, kind: 'charge', currency: 'USD', totalMicros: CHARGED_TOTAL, total: '0.054546', catalog: { id: catalog.id, version: 1, organizationId } }),
      ]);
      expect(events[0]!['lines']).toContainEqual(expect.objectContaining({ component: 'gpu', amountMicros: 2_346, amount: '0.002346' }));
    });

    it('rolls the end back with the ledger when pricing fails: no end reason, no cost, no lines, no events', async () => {
      const organizationId = await fx.organization(['call.cost', 'call.ended']);
      const agentId = await fx.agent(organizationId);
      // A hand-edited catalog with a negative price: stored (the CHECK only asks for an object), refused when read.
      await fx.insertCatalog({ organizationId, version: 1, prices: { gpuPerSecond: -1 }, effectiveFrom: LONG_AGO });
      const startedAt = new Date('2031-01-16T10:00:00.000Z');
      const { callId } = await fx.startInbound({ organizationId, agentId, startedAt });

      await expect(fx.repos.callEnds.finalise(callId, { endReason: 'caller_hangup', endedAt: secondsAfter(startedAt, 61) })).rejects.toThrow(/gpuPerSecond/);

      await expect(fx.repos.calls.findById(callId)).resolves.toMatchObject({ endReason: null, endedAt: null });
      await expect(fx.callCostRow(callId)).resolves.toBeNull();
      await expect(fx.ledger(callId)).resolves.toEqual([]);
      await expect(fx.eventData(organizationId, 'call.ended')).resolves.toEqual([]);
      await expect(fx.eventData(organizationId, 'call.cost')).resolves.toEqual([]);
      // Nothing half-done blocks a later end once a valid version is in force.
      await fx.insertCatalog({ organizationId, version: 2, prices: PRICES, effectiveFrom: secondsAfter(LONG_AGO, 1) });
      await expect(fx.repos.callEnds.finalise(callId, { endReason: 'caller_hangup', endedAt: secondsAfter(startedAt, 61) })).resolves.toBe(true);
      await expect(fx.chargedByComponent(callId)).resolves.toEqual({ telephony: { quantity: 2, amountMicros: 20_000 } });
    });

    it("adds the media path's usage as a late_usage correction when an API hang-up ended (and priced) the call first", async () => {
      const { organizationId, agentId } = await pricedOrganization();
      const startedAt = new Date('2031-01-17T10:00:00.000Z');
      const { callId } = await fx.startInbound({ organizationId, agentId, startedAt });

      await expect(fx.repos.callEnds.finalise(callId, { endReason: 'api_hangup', endedAt: secondsAfter(startedAt, 61) })).resolves.toBe(true);
      await expect(fx.chargedByComponent(callId)).resolves.toEqual({ telephony: { quantity: 2, amountMicros: 20_000 } });
      // The media stream closes a moment later and reports what it measured: the end reason stays.
      await expect(fx.repos.callEnds.finalise(callId, { endReason: 'stream_stopped', endedAt: secondsAfter(startedAt, 62), usage: USAGE })).resolves.toBe(false);

      await expect(fx.repos.calls.findById(callId)).resolves.toMatchObject({ endReason: 'api_hangup' });
      const lines = await fx.ledger(callId);
      expect(lines.filter((line) => line.kind === 'charge').map((line) => line.component)).toEqual(['telephony']);
      const corrections = lines.filter((line) => line.kind === 'correction');
      expect(corrections.every((line) => line.reason === 'late_usage')).toBe(true);
      // Charge + corrections = the whole call, exactly as if it had been priced once with its usage.
      const net: Record<string, { quantity: number; amountMicros: number }> = {};
      for (const line of lines) {
        const sum = (net[line.component] ??= { quantity: 0, amountMicros: 0 });
        sum.quantity += line.quantity;
        sum.amountMicros += line.amountMicros;
      }
      expect(net).toEqual(CHARGED);
      expect((await fx.callCostRow(callId))!.totalMicros).toBe(BigInt(CHARGED_TOTAL));
    });

    it("charges a post-call analysis's tokens as analysis correction lines at the LLM token prices, again for each re-run", async () => {
      const { organizationId, agentId } = await pricedOrganization();
      const { callId } = await fx.endedCall({ organizationId, agentId, startedAt: new Date('2031-01-18T10:00:00.000Z'), seconds: 61, usage: USAGE });
      const before = (await fx.callCostRow(callId))!.totalMicros;
      const ledger = new CostLedger(fx.repos.outbox);
      await fx.prisma.$transaction((tx) => ledger.chargeAnalysis(tx, callId, { inputTokens: 2_000, outputTokens: 300 }));
      await fx.prisma.$transaction((tx) => ledger.chargeAnalysis(tx, callId, { inputTokens: 1_000, outputTokens: 100 }));

      const analysis = (await fx.ledger(callId)).filter((line) => line.component.startsWith('analysis_'));
      expect(analysis).toEqual([
        // 2 000 x 150 000 / 1M = 300; 300 x 600 000 / 1M = 180
        expect.objectContaining({ component: 'analysis_input', kind: 'correction', reason: 'analysis', quantity: 2_000, unit: 'token', amountMicros: 300 }),
        expect.objectContaining({ component: 'analysis_output', kind: 'correction', reason: 'analysis', quantity: 300, amountMicros: 180 }),
        expect.objectContaining({ component: 'analysis_input', quantity: 1_000, amountMicros: 150 }),
        expect.objectContaining({ component: 'analysis_output', quantity: 100, amountMicros: 60 }),
      ]);
      const cost = (await fx.callCostRow(callId))!;
      expect(cost.totalMicros).toBe(before + BigInt(300 + 180 + 150 + 60));
      expect(cost.meters).toMatchObject({ analysisInputTokens: 3_000, analysisOutputTokens: 400 });
      // Nothing else moved: the call's own lines are only charges.
      expect((await fx.ledger(callId)).filter((line) => line.kind === 'correction' && !line.component.startsWith('analysis_'))).toEqual([]);
    });

    it('an outbound call is measured from its answer, at the outbound price', async () => {
      const { organizationId, agentId } = await pricedOrganization();
      const startedAt = new Date('2031-01-17T10:00:00.000Z');
      const admission = await fx.repos.admission.reserveOutbound({
        organizationId, agentId, agentConfigVersion: 1, twilioAccountSid: TEST_ACCOUNT_SID, fromNumber: uniqueE164(), toNumber: uniqueE164(),
        variables: {}, machineDetection: null, at: startedAt,
      });
      if (!admission.admitted) throw new Error('outbound call refused');
      const callId = admission.call.id;
      const callSid = uniqueCallSid();
      await fx.repos.calls.attachTwilioCallSid(callId, callSid);
      await fx.repos.callEnds.applyStatusCallback({ twilioCallSid: callSid, status: 'in-progress', at: secondsAfter(startedAt, 20) });
      await prisma.call.update({ where: { id: callId }, data: { streamStartedAt: secondsAfter(startedAt, 21) } });

      await fx.repos.callEnds.finalise(callId, { endReason: 'agent_hangup', endedAt: secondsAfter(startedAt, 81) });

      // Answered at +20 s, ended at +81 s: 61 s connected = 2 started minutes × 20 000 (the 20 s of ringing are free).
      await expect(fx.chargedByComponent(callId)).resolves.toEqual({ telephony: { quantity: 2, amountMicros: 40_000 } });
      expect((await fx.callCostRow(callId))!.meters).toMatchObject({ direction: 'outbound', measuredConnectedSeconds: 61 });
    });
  });

  describe('catalog version', () => {
    it('prices with the version in force when the call started, even if a newer one took effect before its end', async () => {
      const { organizationId, agentId, catalogId: v1 } = await pricedOrganization();
      const startedAt = new Date('2031-02-01T09:00:00.000Z');
      const v2 = await fx.insertCatalog({
        organizationId, version: 2, prices: { ...PRICES, telephonyInboundPerMinute: 50_000, mediaStreamsPerMinute: 9_000 }, effectiveFrom: secondsAfter(startedAt, 30),
      });
      const usage = { streamMs: 61_000 };

      const before = await fx.endedCall({ organizationId, agentId, startedAt, seconds: 61, usage });
      const atBoundary = await fx.endedCall({ organizationId, agentId, startedAt: secondsAfter(startedAt, 30), seconds: 61, usage });

      // v1: 2 min × 10 000 + 2 min × 3 000. A call starting the instant v2 takes effect gets v2: 2 × 50 000 + 2 × 9 000.
      await expect(fx.chargedByComponent(before.callId)).resolves.toEqual({ telephony: { quantity: 2, amountMicros: 20_000 }, media_streams: { quantity: 2, amountMicros: 6_000 } });
      expect(await fx.callCostRow(before.callId)).toMatchObject({ catalogId: v1, totalMicros: 26_000n });
      for (const line of await fx.ledger(before.callId)) expect(line.catalogId).toBe(v1);
      await expect(fx.chargedByComponent(atBoundary.callId)).resolves.toEqual({ telephony: { quantity: 2, amountMicros: 100_000 }, media_streams: { quantity: 2, amountMicros: 18_000 } });
      expect(await fx.callCostRow(atBoundary.callId)).toMatchObject({ catalogId: v2, totalMicros: 118_000n });
    });

    it('an organization without a catalog of its own is priced with the deployment default', async () => {
      const organizationId = await fx.organization();
      const agentId = await fx.agent(organizationId);
      const { callId } = await fx.endedCall({ organizationId, agentId, startedAt: new Date('2031-02-02T09:00:00.000Z'), seconds: 61 });

      const cost = await fx.callCostRow(callId);
      const catalog = await prisma.priceCatalog.findUniqueOrThrow({ where: { id: cost!.catalogId } });
      expect(catalog.organizationId).toBeNull();
      expect(catalog.prices).toMatchObject({ telephonyInboundPerMinute: 8_500 });
      // 2 started minutes × Twilio's US inbound 8 500 µ$; no stream audio was measured, so no other line.
      await expect(fx.chargedByComponent(callId)).resolves.toEqual({ telephony: { quantity: 2, amountMicros: 17_000 } });
      expect(cost).toMatchObject({ currency: catalog.currency, totalMicros: 17_000n });
    });
  });

  describe("Twilio's billed minutes", () => {
    it('arriving after the charge append correction lines and never touch the charge', async () => {
      const { organizationId, agentId, catalogId } = await pricedOrganization();
      const startedAt = new Date('2031-03-01T09:00:00.000Z');
      const { callId, callSid } = await fx.endedCall({ organizationId, agentId, startedAt, seconds: 61, usage: USAGE });
      const charge = await fx.ledger(callId);

      await fx.completed(callSid, secondsAfter(startedAt, 62), { billedMinutes: 3, callDurationSeconds: 125 });

      const afterFirst = await fx.ledger(callId);
      expect(afterFirst.slice(0, charge.length)).toEqual(charge);
      const telephonyCorrection = { kind: 'correction', reason: 'twilio_billed_duration', component: 'telephony', unit: 'minute', unitPriceMicros: 10_000, unitSize: 1, pricePer: 'minute', catalogId, currency: 'USD' };
      // Twilio billed 3 minutes where 2 were charged: +1 minute at 10 000.
      expect(afterFirst.slice(charge.length)).toEqual([{ ...telephonyCorrection, id: expect.any(String), quantity: 1, amountMicros: 10_000 }]);
      const corrected = await fx.callCostRow(callId);
      expect(corrected).toMatchObject({ totalMicros: BigInt(CHARGED_TOTAL + 10_000) });
      expect(corrected!.correctedAt).toBeInstanceOf(Date);
      expect(corrected!.meters).toMatchObject({ twilioBilledMinutes: 3, measuredConnectedSeconds: 61 });

      // The same callback again (Twilio retries) changes nothing.
      await fx.completed(callSid, secondsAfter(startedAt, 62), { billedMinutes: 3, callDurationSeconds: 125 });
      await expect(fx.ledger(callId)).resolves.toEqual(afterFirst);
      expect(await fx.callCostRow(callId)).toMatchObject({ totalMicros: BigInt(CHARGED_TOTAL + 10_000) });

      // A later figure of 1 minute takes the net from 3 minutes back down to 1: −2 minutes, −20 000.
      await fx.completed(callSid, secondsAfter(startedAt, 63), { billedMinutes: 1 });
      const afterSecond = await fx.ledger(callId);
      expect(afterSecond.slice(0, afterFirst.length)).toEqual(afterFirst);
      expect(afterSecond.slice(afterFirst.length)).toEqual([{ ...telephonyCorrection, id: expect.any(String), quantity: -2, amountMicros: -20_000 }]);
      expect(await fx.callCostRow(callId)).toMatchObject({ totalMicros: BigInt(CHARGED_TOTAL + 10_000 - 20_000) });

      const events = await fx.eventData(organizationId, 'call.cost');
      expect(events.map((event) => [event['kind'], event['totalMicros']]).sort()).toEqual([
        ['charge', CHARGED_TOTAL],
        ['correction', CHARGED_TOTAL - 10_000],
        ['correction', CHARGED_TOTAL + 10_000],
      ]);
      const correctionLines = events.filter((event) => event['kind'] === 'correction').map((event) => event['lines']);
      expect(correctionLines).toEqual(
        expect.arrayContaining([
          [expect.objectContaining({ component: 'telephony', quantity: 1, amountMicros: 10_000, amount: '0.010000' })],
          [expect.objectContaining({ component: 'telephony', quantity: -2, amountMicros: -20_000, amount: '-0.020000' })],
        ]),
      );
    });

    it("arriving before the media path ends a streamed call: nothing priced until finalise, which charges Twilio's minutes", async () => {
      const { organizationId, agentId } = await pricedOrganization();
      const startedAt = new Date('2031-03-02T09:00:00.000Z');
      const { callId, callSid } = await fx.startInbound({ organizationId, agentId, startedAt });

      await fx.completed(callSid, secondsAfter(startedAt, 125), { billedMinutes: 4, callDurationSeconds: 125 });
      await expect(fx.callCostRow(callId)).resolves.toBeNull();
      await expect(fx.ledger(callId)).resolves.toEqual([]);

      await fx.repos.callEnds.finalise(callId, { endReason: 'caller_hangup', endedAt: secondsAfter(startedAt, 126), usage: { ...USAGE, streamMs: 124_000 } });

      // Measured: 125 s (the earlier end wins) = 3 started minutes, but Twilio's 4 is what it invoices: 4 × 10 000.
      const charged = await fx.chargedByComponent(callId);
      expect(charged['telephony']).toEqual({ quantity: 4, amountMicros: 40_000 });
      expect(charged['media_streams']).toEqual({ quantity: 3, amountMicros: 9_000 }); // 124 000 ms = 3 started minutes × 3 000
      expect((await fx.ledger(callId)).filter((line) => line.kind === 'correction')).toEqual([]);
      expect((await fx.callCostRow(callId))!.meters).toMatchObject({ measuredConnectedSeconds: 125, twilioBilledMinutes: 4 });
      await expect(fx.eventData(organizationId, 'call.cost')).resolves.toHaveLength(1);
    });

    it('price a call that never had a stream when they arrive with its final status: telephony only', async () => {
      const { organizationId, agentId, catalogId } = await pricedOrganization();
      const startedAt = new Date('2031-03-03T09:00:00.000Z');
      const { callId, callSid } = await fx.startInbound({ organizationId, agentId, startedAt, withStream: false });

      await fx.completed(callSid, secondsAfter(startedAt, 40), { billedMinutes: 1, callDurationSeconds: 40 });

      await expect(fx.chargedByComponent(callId)).resolves.toEqual({ telephony: { quantity: 1, amountMicros: 10_000 } });
      const cost = await fx.callCostRow(callId);
      expect(cost).toMatchObject({ catalogId, totalMicros: 10_000n });
      expect(cost!.meters).toMatchObject({ measuredConnectedSeconds: 40, twilioBilledMinutes: 1, streamMs: 0 });
    });

    it('never make a call to a number no organization owns billable', async () => {
      const callSid = uniqueCallSid();
      const at = new Date('2031-03-04T09:00:00.000Z');
      const rejected = await fx.repos.admission.recordRejected({
        twilioCallSid: callSid, twilioAccountSid: TEST_ACCOUNT_SID, fromNumber: uniqueE164(), toNumber: uniqueE164(), status: 'ringing', endReason: 'unknown_number', at,
      });
      await expect(fx.completed(callSid, secondsAfter(at, 5), { billedMinutes: 1, callDurationSeconds: 5 })).resolves.toBe(true);
      await expect(fx.callCostRow(rejected.id)).resolves.toBeNull();
      await expect(fx.ledger(rejected.id)).resolves.toEqual([]);
    });
  });

  describe('CostRepository.callCost() re-pricing', () => {
    it('re-prices from the stored meters and version to the ledger net, corrections included, every time', async () => {
      const { organizationId, agentId, catalogId } = await pricedOrganization();
      const startedAt = new Date('2031-04-01T09:00:00.000Z');
      const { callId, callSid } = await fx.endedCall({ organizationId, agentId, startedAt, seconds: 61, usage: USAGE });
      await fx.completed(callSid, secondsAfter(startedAt, 62), { billedMinutes: 3 });

      const first = await fx.costs.callCost(organizationId, callId);
      expect(first).toMatchObject({ callId, currency: 'USD', totalMicros: CHARGED_TOTAL + 10_000, catalog: { id: catalogId, version: 1, organizationId } });
      expect(first!.lines).toHaveLength(10);
      expect(first!.repriced.matchesLedger).toBe(true);
      expect(first!.repriced.totalMicros).toBe(CHARGED_TOTAL + 10_000);
      expect(first!.repriced.lines.find((line) => line.component === 'telephony')).toMatchObject({ quantity: 3, amountMicros: 30_000 });
      // The explicit re-pricing: the stored meters through the pure pricing with the stored version's prices.
      expect(first!.repriced.lines).toEqual(priceCall(callMetersSchema.parse(first!.meters), PRICES));
      await expect(fx.costs.callCost(organizationId, callId)).resolves.toEqual(first);

      // A version made after the call changes nothing about it.
      await fx.costs.createCatalogVersion({ organizationId, setBy: 'operator', prices: { telephonyInboundPerMinute: 99_000 } });
      await expect(fx.costs.callCost(organizationId, callId)).resolves.toEqual(first);
      // Scoped to its organization.
      await expect(fx.costs.callCost(await fx.organization(), callId)).resolves.toBeNull();
    });
  });
});
