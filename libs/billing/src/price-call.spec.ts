import { emptyCallMeters, type CallMeters } from './call-meters';
import { DEFAULT_PRICES } from './price-catalog';
import { priceCall, totalMicros } from './price-call';

const call = (meters: Partial<CallMeters>, engine = 'pipeline'): CallMeters => ({ ...emptyCallMeters('inbound', engine), ...meters });

describe('priceCall: telephony', () => {
  it('bills a 61 s inbound call as 2 started minutes: 2 × 8_500 = 17_000 µ$', () => {
    expect(priceCall(call({ measuredConnectedSeconds: 61 }), DEFAULT_PRICES)).toEqual([
      { component: 'telephony', quantity: 2, unit: 'minute', unitPriceMicros: 8_500, unitSize: 1, pricePer: 'minute', amountMicros: 17_000 },
    ]);
  });

  it('bills 60 s as 1 minute, 0 s not at all, and prefers Twilio’s Duration (3 × 8_500 = 25_500)', () => {
    expect(priceCall(call({ measuredConnectedSeconds: 60 }), DEFAULT_PRICES).map((l) => [l.quantity, l.amountMicros])).toEqual([[1, 8_500]]);
    expect(priceCall(call({ measuredConnectedSeconds: 0 }), DEFAULT_PRICES)).toEqual([]);
    const twilio = priceCall(call({ measuredConnectedSeconds: 61, twilioBilledMinutes: 3 }), DEFAULT_PRICES);
    expect(twilio.map((l) => [l.component, l.quantity, l.amountMicros])).toEqual([['telephony', 3, 25_500]]);
  });

  it('prices an outbound leg at the outbound rate: 2 × 14_000 = 28_000 µ$', () => {
    const outbound = { ...emptyCallMeters('outbound', 'pipeline'), measuredConnectedSeconds: 61 };
    expect(priceCall(outbound, DEFAULT_PRICES).map((l) => [l.unitPriceMicros, l.amountMicros])).toEqual([[14_000, 28_000]]);
  });

  it('bills the media stream per started minute: 61_000 ms -> 2 × 4_000 = 8_000 µ$', () => {
    expect(priceCall(call({ streamMs: 61_000 }), DEFAULT_PRICES)).toEqual([
      { component: 'media_streams', quantity: 2, unit: 'minute', unitPriceMicros: 4_000, unitSize: 1, pricePer: 'minute', amountMicros: 8_000 },
    ]);
  });

  it('adds platform fee and margin per billed minute only when priced: 2 × 1_000 and 2 × 500', () => {
    const meters = call({ measuredConnectedSeconds: 61, streamMs: 60_000 });
    expect(priceCall(meters, DEFAULT_PRICES).map((l) => l.component)).toEqual(['telephony', 'media_streams']);
    const withFees = priceCall(meters, { ...DEFAULT_PRICES, platformFeePerMinute: 1_000, marginPerMinute: 500 });
    expect(withFees.map((l) => [l.component, l.quantity, l.amountMicros])).toEqual([
      ['telephony', 2, 17_000],
      ['media_streams', 1, 4_000],
      ['platform_fee', 2, 2_000],
      ['margin', 2, 1_000],
    ]);
  });

  it('charges no platform fee or margin on a call refused before any media stream (Twilio still bills its minute)', () => {
    const refused = call({ measuredConnectedSeconds: 6, twilioBilledMinutes: 1 });
    const lines = priceCall(refused, { ...DEFAULT_PRICES, platformFeePerMinute: 1_000, marginPerMinute: 500 });
    expect(lines.map((l) => [l.component, l.quantity, l.amountMicros])).toEqual([['telephony', 1, 8_500]]);
  });

  it('bills a web call no telephony or media-stream minutes; fee and margin follow its stream: 2 × 1_000 and 2 × 500', () => {
    const web = { ...emptyCallMeters('web', 'pipeline'), measuredConnectedSeconds: 61, streamMs: 61_000, sttAudioMs: 60_000 };
    const lines = priceCall(web, { ...DEFAULT_PRICES, platformFeePerMinute: 1_000, marginPerMinute: 500 });
    expect(lines.map((l) => [l.component, l.quantity, l.amountMicros])).toEqual([
      ['stt', 60_000, DEFAULT_PRICES.sttPerAudioMinute],
      ['platform_fee', 2, 2_000],
      ['margin', 2, 1_000],
    ]);
  });
});

describe('priceCall: speech and tokens', () => {
  it('prices 1_200 input tokens (200 cached) and 350 output: 150 + 15 + 210 µ$', () => {
    // uncached 1_000 × 150_000 / 1M = 150; cached 200 × 75_000 / 1M = 15; output 350 × 600_000 / 1M = 210.
    const lines = priceCall(call({ llmInputTokens: 1_200, llmCachedInputTokens: 200, llmOutputTokens: 350 }), DEFAULT_PRICES);
    expect(lines.map((l) => [l.component, l.quantity, l.unit, l.pricePer, l.amountMicros])).toEqual([
      ['llm_input', 1_000, 'token', '1M tokens', 150],
      ['llm_cached_input', 200, 'token', '1M tokens', 15],
      ['llm_output', 350, 'token', '1M tokens', 210],
    ]);
    expect(totalMicros(lines)).toBe(375);
  });

  it('rounds each line half up, and keeps a line whose amount rounds to 0', () => {
    // 1 token × 150_000 / 1M = 0.15 -> 0; 5 tokens × 100_000 / 1M = 0.5 -> 1.
    expect(priceCall(call({ llmInputTokens: 1 }), DEFAULT_PRICES).map((l) => [l.quantity, l.amountMicros])).toEqual([[1, 0]]);
    expect(priceCall(call({ llmInputTokens: 5 }), { llmInputPerMillionTokens: 100_000 }).map((l) => l.amountMicros)).toEqual([1]);
  });

  it('never prices negative uncached input when the cached count runs ahead', () => {
    const lines = priceCall(call({ llmInputTokens: 100, llmCachedInputTokens: 150 }), DEFAULT_PRICES);
    expect(lines.map((l) => l.component)).toEqual(['llm_cached_input']);
  });

  it('prorates speech: 90 s STT, 1_000 TTS characters, 30 s of TTS audio', () => {
    // STT 90_000 ms × 6_000 / 60_000 = 9_000; TTS 1_000 × 15_000_000 / 1M = 15_000; audio 30_000 × 20_000 / 60_000 = 10_000.
    const lines = priceCall(call({ sttAudioMs: 90_000, ttsCharacters: 1_000, ttsAudioMs: 30_000 }), { ...DEFAULT_PRICES, ttsPerAudioMinute: 20_000 });
    expect(lines.map((l) => [l.component, l.unit, l.unitSize, l.amountMicros])).toEqual([
      ['stt', 'audio_ms', 60_000, 9_000],
      ['tts_characters', 'character', 1_000_000, 15_000],
      ['tts_audio', 'audio_ms', 60_000, 10_000],
    ]);
  });

  it('prices realtime tokens with cached text and audio on one line', () => {
    // text 900 × 4 = 3_600; audio 4_000 × 32 = 128_000; cached 1_100 × 0.4 = 440; out 200 × 16 = 3_200, 3_000 × 64 = 192_000.
    const tokens: Partial<CallMeters> = {
      realtimeTextInputTokens: 1_000,
      realtimeCachedTextInputTokens: 100,
      realtimeAudioInputTokens: 5_000,
      realtimeCachedAudioInputTokens: 1_000,
      realtimeTextOutputTokens: 200,
      realtimeAudioOutputTokens: 3_000,
    };
    const meters = call(tokens, 'realtime');
    expect(priceCall(meters, DEFAULT_PRICES).map((l) => [l.component, l.quantity, l.amountMicros])).toEqual([
      ['realtime_text_input', 900, 3_600],
      ['realtime_audio_input', 4_000, 128_000],
      ['realtime_cached_input', 1_100, 440],
      ['realtime_text_output', 200, 3_200],
      ['realtime_audio_output', 3_000, 192_000],
    ]);
  });
});
