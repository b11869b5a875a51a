import { emptyCallMeters, type CallMeters } from './call-meters';
import { correctionLines, netByComponent, type LedgerLineLike } from './ledger-correction';
import { DEFAULT_PRICES, HOSTED_SPEECH_TO_SPEECH_PER_MINUTE, type PriceCatalogPrices } from './price-catalog';
import { COST_COMPONENTS, priceCall, totalMicros } from './price-call';

const call = (meters: Partial<CallMeters>, engine = 'pipeline'): CallMeters => ({ ...emptyCallMeters('inbound', engine), ...meters });

describe('correctionLines', () => {
  const measured = call({ measuredConnectedSeconds: 61 });
  const charge = priceCall(measured, DEFAULT_PRICES); // telephony: 2 minutes × 8_500 = 17_000 µ$

  it("adds +1 minute, +8_500 µ$ when Twilio bills 3 minutes for a call charged as 2 measured", () => {
    const repriced = priceCall({ ...measured, twilioBilledMinutes: 3 }, DEFAULT_PRICES); // 3 × 8_500 = 25_500
    const correction = correctionLines(charge, repriced);
    expect(correction).toEqual([
      { component: 'telephony', quantity: 1, unit: 'minute', unitPriceMicros: 8_500, unitSize: 1, pricePer: 'minute', amountMicros: 8_500 },
    ]);
    // Applied once, the ledger matches: running it again corrects nothing.
    expect(correctionLines([...charge, ...correction], repriced)).toEqual([]);
  });

  it('adds nothing when the repricing matches the charge', () => {
    expect(correctionLines(charge, priceCall(measured, DEFAULT_PRICES))).toEqual([]);
  });

  it("reverses a component that disappeared, at the stored line's price", () => {
    const withStream = priceCall({ ...measured, streamMs: 61_000 }, DEFAULT_PRICES); // + media_streams 2 × 4_000 = 8_000
    expect(correctionLines(withStream, charge)).toEqual([
      { component: 'media_streams', quantity: -2, unit: 'minute', unitPriceMicros: 4_000, unitSize: 1, pricePer: 'minute', amountMicros: -8_000 },
    ]);
  });

  it('corrects the amount alone when only the price changed, at the new price', () => {
    // 3 s of GPU: 3_000_000 × 694 / 1M = 2_082 µ$; repriced at 1_000 µ$/s = 3_000 µ$; difference 918 µ$, quantity 0.
    const gpu = call({ gpuMicroseconds: 3_000_000 });
    const correction = correctionLines(priceCall(gpu, DEFAULT_PRICES), priceCall(gpu, { gpuPerSecond: 1_000 }));
    expect(correction).toEqual([
      { component: 'gpu', quantity: 0, unit: 'microsecond', unitPriceMicros: 1_000, unitSize: 1_000_000, pricePer: 'second', amountMicros: 918 },
    ]);
  });

  it('brings the net of every component to the repricing, whatever the sequence of repricings', () => {
    const base = call({ measuredConnectedSeconds: 61, streamMs: 61_000, llmInputTokens: 1_200, llmCachedInputTokens: 200, llmOutputTokens: 350 });
    const revisions: { meters: CallMeters; prices: PriceCatalogPrices }[] = [
      { meters: base, prices: DEFAULT_PRICES },
      { meters: { ...base, twilioBilledMinutes: 3 }, prices: DEFAULT_PRICES },
      { meters: { ...base, twilioBilledMinutes: 1, streamMs: 0, gpuMicroseconds: 4_500 }, prices: DEFAULT_PRICES },
      { meters: { ...base, twilioBilledMinutes: 1 }, prices: { ...DEFAULT_PRICES, platformFeePerMinute: 2_000, llmOutputPerMillionTokens: 1 } },
      { meters: { ...base, engine: 'realtime', callerAudioMs: 45_000, agentAudioSentMs: 15_000 }, prices: HOSTED_SPEECH_TO_SPEECH_PER_MINUTE },
      { meters: call({}), prices: DEFAULT_PRICES },
    ];
    const orders = [
      [0, 1, 2, 3, 4, 5],
      [5, 4, 3, 2, 1, 0],
      [0, 2, 0, 4, 1, 4, 3],
      [3, 5, 3, 1],
    ];
    for (const order of orders) {
      const ledger: LedgerLineLike[] = [];
      for (const index of order) {
        const { meters, prices } = revisions[index]!;
        const repriced = priceCall(meters, prices);
        const before = structuredClone(ledger);
        ledger.push(...correctionLines(ledger, repriced));
        expect(ledger.slice(0, before.length)).toEqual(before); // append-only: earlier lines untouched

        const ledgerNet = netByComponent(ledger);
        const targetNet = netByComponent(repriced);
        for (const component of COST_COMPONENTS) {
          expect([component, ledgerNet.get(component) ?? { quantity: 0, amountMicros: 0 }]).toEqual([
            component,
            targetNet.get(component) ?? { quantity: 0, amountMicros: 0 },
          ]);
        }
        expect(totalMicros(ledger)).toBe(totalMicros(repriced));
        expect(correctionLines(ledger, repriced)).toEqual([]);
      }
    }
  });
});

describe('netByComponent', () => {
  it('nets each component over a charge and its corrections', () => {
    const nets = netByComponent([
      { component: 'telephony', quantity: 2, amountMicros: 17_000 },
      { component: 'media_streams', quantity: 2, amountMicros: 8_000 },
      { component: 'telephony', quantity: 1, amountMicros: 8_500 },
      { component: 'media_streams', quantity: -2, amountMicros: -8_000 },
    ]);
    expect([...nets]).toEqual([
      ['telephony', { quantity: 3, amountMicros: 25_500 }],
      ['media_streams', { quantity: 0, amountMicros: 0 }],
    ]);
  });
});
