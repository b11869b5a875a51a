import { emptyCallMeters, type CallMeters } from './call-meters';
import { amountMicros } from './money';
import { DEFAULT_PRICES, HOSTED_SPEECH_TO_SPEECH_PER_MINUTE } from './price-catalog';
import { COST_COMPONENTS, priceCall, totalMicros } from './price-call';

const call = (meters: Partial<CallMeters>, engine = 'pipeline'): CallMeters => ({ ...emptyCallMeters('inbound', engine), ...meters });

describe('priceCall: self-hosted inference time', () => {
  it('prices each call’s share of a GPU batch; the shares sum to the batch price within rounding', () => {
    // A batch ran 9_000 µs over rows 1, 1, 1: each call gets 3_000 µs.
    // Per call: 3_000 × 694 / 1M = 2.082 -> 2 µ$. Whole batch: 9_000 × 694 / 1M = 6.246 -> 6 µ$.
    const shares = [3_000, 3_000, 3_000];
    const lines = shares.map((gpuMicroseconds) => priceCall(call({ gpuMicroseconds }), DEFAULT_PRICES));
    for (const callLines of lines) {
      expect(callLines).toEqual([
        { component: 'gpu', quantity: 3_000, unit: 'microsecond', unitPriceMicros: 694, unitSize: 1_000_000, pricePer: 'second', amountMicros: 2 },
      ]);
    }
    const batchAmount = amountMicros(9_000, 694, 1_000_000);
    expect(batchAmount).toBe(6);
    // Each line rounds by at most half a µ$.
    expect(Math.abs(totalMicros(lines.flat()) - batchAmount)).toBeLessThanOrEqual(shares.length / 2);
  });

  it('shows GPU and CPU time even when the catalog prices it at 0', () => {
    const lines = priceCall(call({ gpuMicroseconds: 1_500_000, cpuMicroseconds: 250_000 }), {});
    expect(lines.map((l) => [l.component, l.quantity, l.unitPriceMicros, l.amountMicros])).toEqual([
      ['gpu', 1_500_000, 0, 0],
      ['cpu', 250_000, 0, 0],
    ]);
  });
});

describe('priceCall: hosted realtime per minute', () => {
  const audio = { callerAudioMs: 90_000, agentAudioSentMs: 30_000, agentAudioHeardMs: 25_000 };

  it('prices caller and agent audio minutes on the realtime engine: 90_000 + 120_000 µ$', () => {
    // 90_000 ms × 60_000 / 60_000 = 90_000 µ$; 30_000 ms (sent, not heard) × 240_000 / 60_000 = 120_000 µ$.
    const lines = priceCall(call(audio, 'realtime'), HOSTED_SPEECH_TO_SPEECH_PER_MINUTE);
    const perAudioMinute = { unit: 'audio_ms', unitSize: 60_000, pricePer: 'minute' };
    expect(lines).toEqual([
      { component: 'realtime_audio_input_minutes', quantity: 90_000, unitPriceMicros: 60_000, amountMicros: 90_000, ...perAudioMinute },
      { component: 'realtime_audio_output_minutes', quantity: 30_000, unitPriceMicros: 240_000, amountMicros: 120_000, ...perAudioMinute },
    ]);
    expect(totalMicros(lines)).toBe(210_000);
  });

  it('adds no minute lines on another engine, nor where the catalog prices realtime per token', () => {
    expect(priceCall(call(audio, 'pipeline'), HOSTED_SPEECH_TO_SPEECH_PER_MINUTE)).toEqual([]);
    expect(priceCall(call(audio, 'realtime'), DEFAULT_PRICES)).toEqual([]);
  });
});

describe('priceCall: determinism and validation', () => {
  const everything: CallMeters = {
    ...emptyCallMeters('outbound', 'realtime'),
    measuredConnectedSeconds: 125,
    streamMs: 124_000,
    callerAudioMs: 60_000,
    agentAudioSentMs: 40_000,
    agentAudioHeardMs: 38_000,
    sttAudioMs: 55_000,
    ttsCharacters: 900,
    ttsAudioMs: 40_000,
    llmInputTokens: 5_000,
    llmCachedInputTokens: 1_000,
    llmOutputTokens: 700,
    realtimeTextInputTokens: 300,
    realtimeAudioInputTokens: 6_000,
    realtimeCachedTextInputTokens: 100,
    realtimeCachedAudioInputTokens: 2_000,
    realtimeTextOutputTokens: 150,
    realtimeAudioOutputTokens: 4_000,
    gpuMicroseconds: 2_000_000,
    cpuMicroseconds: 500_000,
    analysisInputTokens: 1_800,
    analysisOutputTokens: 240,
  };
  const allPriced = { ...DEFAULT_PRICES, ...HOSTED_SPEECH_TO_SPEECH_PER_MINUTE, ttsPerAudioMinute: 1_000, platformFeePerMinute: 10, marginPerMinute: 5 };

  it('gives identical lines for the same meters and prices, one per component, in COST_COMPONENTS order', () => {
    const first = priceCall(everything, allPriced);
    expect(priceCall(structuredClone(everything), { ...allPriced })).toEqual(first);
    expect(first.map((l) => l.component)).toEqual(COST_COMPONENTS);
  });

  it('lists the components in their documented order', () => {
    expect(COST_COMPONENTS).toEqual([
      ...['telephony', 'media_streams', 'stt', 'tts_characters', 'tts_audio', 'llm_input', 'llm_cached_input', 'llm_output'],
      ...['realtime_text_input', 'realtime_audio_input', 'realtime_cached_input', 'realtime_text_output', 'realtime_audio_output'],
      ...['realtime_audio_input_minutes', 'realtime_audio_output_minutes', 'gpu', 'cpu', 'analysis_input', 'analysis_output', 'platform_fee', 'margin'],
    ]);
  });

  it('throws RangeError on a negative or fractional meter or price', () => {
    expect(() => priceCall(call({ sttAudioMs: -1 }), DEFAULT_PRICES)).toThrow(RangeError);
    expect(() => priceCall(call({ ttsCharacters: 1.5 }), DEFAULT_PRICES)).toThrow(RangeError);
    expect(() => priceCall(call({ sttAudioMs: 1_000 }), { sttPerAudioMinute: 0.5 })).toThrow(RangeError);
  });
});

describe('totalMicros', () => {
  it('sums amounts exactly, negative corrections included', () => {
    expect(totalMicros([{ amountMicros: 17_000 }, { amountMicros: 8_500 }, { amountMicros: -8_500 }])).toBe(17_000);
    expect(totalMicros([])).toBe(0);
  });
});
