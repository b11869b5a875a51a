import { currencyCode, DEFAULT_PRICES, HOSTED_SPEECH_TO_SPEECH_PER_MINUTE, PRICE_FIELDS, priceCatalogPrices } from './price-catalog';

describe('priceCatalogPrices', () => {
  it('accepts an empty catalog (every price 0) and the shipped catalogs', () => {
    expect(priceCatalogPrices.parse({})).toEqual({});
    expect(priceCatalogPrices.parse(DEFAULT_PRICES)).toEqual(DEFAULT_PRICES);
    expect(priceCatalogPrices.parse(HOSTED_SPEECH_TO_SPEECH_PER_MINUTE)).toEqual(HOSTED_SPEECH_TO_SPEECH_PER_MINUTE);
  });

  it('rejects negative, fractional, oversized, non-numeric and unknown prices', () => {
    expect(priceCatalogPrices.safeParse({ gpuPerSecond: -1 }).success).toBe(false);
    expect(priceCatalogPrices.safeParse({ gpuPerSecond: 694.5 }).success).toBe(false);
    expect(priceCatalogPrices.safeParse({ gpuPerSecond: 1e12 + 1 }).success).toBe(false);
    expect(priceCatalogPrices.safeParse({ gpuPerSecond: '694' }).success).toBe(false);
    expect(priceCatalogPrices.safeParse({ gpuPerHour: 2_500_000 }).success).toBe(false);
    expect(priceCatalogPrices.safeParse({ gpuPerSecond: 1e12 }).success).toBe(true);
  });

  it('has exactly PRICE_FIELDS, each described', () => {
    expect(Object.keys(priceCatalogPrices.shape)).toEqual([...PRICE_FIELDS]);
    for (const field of PRICE_FIELDS) {
      expect(priceCatalogPrices.shape[field].description).toMatch(/^µ\$ .+/);
    }
  });
});

describe('shipped catalogs', () => {
  it('default prices realtime per token, not per minute', () => {
    expect(DEFAULT_PRICES.realtimeAudioInputPerMinute).toBeUndefined();
    expect(DEFAULT_PRICES.realtimeAudioOutputPerMinute).toBeUndefined();
    expect(DEFAULT_PRICES.realtimeAudioInputPerMillionTokens).toBe(32_000_000);
  });

  it('hosted speech-to-speech shares the default telephony and charges per minute only', () => {
    for (const field of ['telephonyInboundPerMinute', 'telephonyOutboundPerMinute', 'mediaStreamsPerMinute'] as const) {
      expect(HOSTED_SPEECH_TO_SPEECH_PER_MINUTE[field]).toBe(DEFAULT_PRICES[field]);
    }
    expect(HOSTED_SPEECH_TO_SPEECH_PER_MINUTE.realtimeAudioInputPerMinute).toBe(60_000);
    expect(HOSTED_SPEECH_TO_SPEECH_PER_MINUTE.realtimeAudioOutputPerMinute).toBe(240_000);
    const perTokenRealtime = PRICE_FIELDS.filter((field) => field.startsWith('realtime') && field.endsWith('PerMillionTokens'));
    expect(perTokenRealtime).toHaveLength(5);
    for (const field of perTokenRealtime) expect(HOSTED_SPEECH_TO_SPEECH_PER_MINUTE[field]).toBe(0);
  });

  it('cannot be mutated by a consumer', () => {
    expect(Object.isFrozen(DEFAULT_PRICES)).toBe(true);
    expect(Object.isFrozen(HOSTED_SPEECH_TO_SPEECH_PER_MINUTE)).toBe(true);
  });
});

describe('currencyCode', () => {
  it('accepts ISO 4217 codes only', () => {
    expect(currencyCode.safeParse('USD').success).toBe(true);
    for (const bad of ['usd', 'US', 'EURO', '', 'U$D']) expect(currencyCode.safeParse(bad).success).toBe(false);
  });
});
