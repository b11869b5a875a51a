import { billedTelephonyMinutes, type CallMeters } from './call-meters';
import { amountMicros, startedUnits, sumIntegers } from './money';
import type { PriceCatalogPrices, PriceField } from './price-catalog';

export type CostComponent =
  | 'telephony'
  | 'media_streams'
  | 'stt'
  | 'tts_characters'
  | 'tts_audio'
  | 'llm_input'
  | 'llm_cached_input'
  | 'llm_output'
  | 'realtime_text_input'
  | 'realtime_audio_input'
  | 'realtime_cached_input'
  | 'realtime_text_output'
  | 'realtime_audio_output'
  | 'realtime_audio_input_minutes'
  | 'realtime_audio_output_minutes'
  | 'gpu'
  | 'cpu'
  | 'analysis_input'
  | 'analysis_output'
  | 'platform_fee'
  | 'margin';

export type CostUnit = 'minute' | 'audio_ms' | 'character' | 'token' | 'microsecond';

export interface CostLine {
  component: CostComponent;
  /** Integer, in `unit` (the meter's base unit). Negative only in correction lines. */
  quantity: number;
  unit: CostUnit;
  /** µ$ per `unitSize` units of `unit`. */
  unitPriceMicros: number;
  unitSize: number;
  /** Human label of the price unit: 'minute', '1M characters', '1M tokens', 'second'. */
  pricePer: string;
  /** Integer µ$. Negative only in correction lines. */
  amountMicros: number;
}

type PriceUnit = Pick<CostLine, 'unit' | 'unitSize' | 'pricePer'>;
const WHOLE_MINUTE: PriceUnit = { unit: 'minute', unitSize: 1, pricePer: 'minute' };
const AUDIO_MINUTE: PriceUnit = { unit: 'audio_ms', unitSize: 60_000, pricePer: 'minute' };
const MILLION_CHARACTERS: PriceUnit = { unit: 'character', unitSize: 1_000_000, pricePer: '1M characters' };
const MILLION_TOKENS: PriceUnit = { unit: 'token', unitSize: 1_000_000, pricePer: '1M tokens' };
const SECOND: PriceUnit = { unit: 'microsecond', unitSize: 1_000_000, pricePer: 'second' };

interface ComponentRule extends PriceUnit {
  quantity(meters: CallMeters): number;
  priceField(meters: CallMeters): PriceField;
  /**
   * Omit the line when its price is 0. Most lines show even when free (GPU time is worth seeing); these
   * are add-ons whose 0 means "not charged this way" (a per-token realtime catalog, no fee), so a line is noise.
   */
  onlyWhenPriced?: true;
}

/** A web call (from the browser) has no telephone line: no Twilio minutes, no media-stream minutes. */
const onTelephone = (meters: CallMeters, quantity: number): number => (meters.direction === 'web' ? 0 : quantity);
const telephonyMinutes = (meters: CallMeters): number => onTelephone(meters, billedTelephonyMinutes(meters).minutes);
/**
 * Fee and margin are for calls an agent served: a call refused before any media stream pays Twilio
 * only. A phone call counts its billed line minutes; a web call, the started minutes of its stream.
 */
const servedMinutes = (meters: CallMeters): number => {
  if (meters.streamMs <= 0) return 0;
  return meters.direction === 'web' ? startedUnits(meters.streamMs, 60_000) : telephonyMinutes(meters);
};
const onRealtimeEngine = (meters: CallMeters, quantity: number): number => (meters.engine === 'realtime' ? quantity : 0);
const uncached = (all: number, cached: number): number => Math.max(0, all - cached);

/** Written in line order: COST_COMPONENTS is read off its keys. */
const RULES: Record<CostComponent, ComponentRule> = {
  telephony: {
    ...WHOLE_MINUTE,
    quantity: telephonyMinutes,
    priceField: (m) => (m.direction === 'inbound' ? 'telephonyInboundPerMinute' : 'telephonyOutboundPerMinute'),
  },
  media_streams: { ...WHOLE_MINUTE, quantity: (m) => onTelephone(m, startedUnits(m.streamMs, 60_000)), priceField: () => 'mediaStreamsPerMinute' },
  stt: { ...AUDIO_MINUTE, quantity: (m) => m.sttAudioMs, priceField: () => 'sttPerAudioMinute' },
  tts_characters: { ...MILLION_CHARACTERS, quantity: (m) => m.ttsCharacters, priceField: () => 'ttsPerMillionCharacters' },
  tts_audio: { ...AUDIO_MINUTE, quantity: (m) => m.ttsAudioMs, priceField: () => 'ttsPerAudioMinute' },
  llm_input: {
    ...MILLION_TOKENS,
    quantity: (m) => uncached(m.llmInputTokens, m.llmCachedInputTokens),
    priceField: () => 'llmInputPerMillionTokens',
  },
  llm_cached_input: { ...MILLION_TOKENS, quantity: (m) => m.llmCachedInputTokens, priceField: () => 'llmCachedInputPerMillionTokens' },
  llm_output: { ...MILLION_TOKENS, quantity: (m) => m.llmOutputTokens, priceField: () => 'llmOutputPerMillionTokens' },
  realtime_text_input: {
    ...MILLION_TOKENS,
    quantity: (m) => uncached(m.realtimeTextInputTokens, m.realtimeCachedTextInputTokens),
    priceField: () => 'realtimeTextInputPerMillionTokens',
  },
  realtime_audio_input: {
    ...MILLION_TOKENS,
    quantity: (m) => uncached(m.realtimeAudioInputTokens, m.realtimeCachedAudioInputTokens),
    priceField: () => 'realtimeAudioInputPerMillionTokens',
  },
  realtime_cached_input: {
    ...MILLION_TOKENS,
    quantity: (m) => sumIntegers([m.realtimeCachedTextInputTokens, m.realtimeCachedAudioInputTokens]),
    priceField: () => 'realtimeCachedInputPerMillionTokens',
  },
  realtime_text_output: { ...MILLION_TOKENS, quantity: (m) => m.realtimeTextOutputTokens, priceField: () => 'realtimeTextOutputPerMillionTokens' },
  realtime_audio_output: {
    ...MILLION_TOKENS,
    quantity: (m) => m.realtimeAudioOutputTokens,
    priceField: () => 'realtimeAudioOutputPerMillionTokens',
  },
  realtime_audio_input_minutes: {
    ...AUDIO_MINUTE,
    quantity: (m) => onRealtimeEngine(m, m.callerAudioMs),
    priceField: () => 'realtimeAudioInputPerMinute',
    onlyWhenPriced: true,
  },
  realtime_audio_output_minutes: {
    ...AUDIO_MINUTE,
    quantity: (m) => onRealtimeEngine(m, m.agentAudioSentMs),
    priceField: () => 'realtimeAudioOutputPerMinute',
    onlyWhenPriced: true,
  },
  gpu: { ...SECOND, quantity: (m) => m.gpuMicroseconds, priceField: () => 'gpuPerSecond' },
  cpu: { ...SECOND, quantity: (m) => m.cpuMicroseconds, priceField: () => 'cpuPerSecond' },
  // Post-call analysis is an LLM request like the agent's own, at the catalog's LLM token prices.
  analysis_input: { ...MILLION_TOKENS, quantity: (m) => m.analysisInputTokens, priceField: () => 'llmInputPerMillionTokens' },
  analysis_output: { ...MILLION_TOKENS, quantity: (m) => m.analysisOutputTokens, priceField: () => 'llmOutputPerMillionTokens' },
  platform_fee: { ...WHOLE_MINUTE, quantity: servedMinutes, priceField: () => 'platformFeePerMinute', onlyWhenPriced: true },
  margin: { ...WHOLE_MINUTE, quantity: servedMinutes, priceField: () => 'marginPerMinute', onlyWhenPriced: true },
};

/** Every component, in the order lines are listed. */
export const COST_COMPONENTS: readonly CostComponent[] = Object.freeze(Object.keys(RULES) as CostComponent[]);

/** Prices one call: one line per component with a quantity (see RULES for the exceptions), in COST_COMPONENTS order. */
export function priceCall(meters: CallMeters, prices: PriceCatalogPrices): CostLine[] {
  const lines: CostLine[] = [];
  for (const component of COST_COMPONENTS) {
    const { quantity: quantityOf, priceField, onlyWhenPriced, unit, unitSize, pricePer } = RULES[component];
    const quantity = quantityOf(meters);
    const unitPriceMicros = prices[priceField(meters)] ?? 0;
    // Only exact zeros are skipped: a negative meter or price must reach amountMicros and throw.
    if (quantity === 0 || (onlyWhenPriced && unitPriceMicros === 0)) continue;
    const amount = amountMicros(quantity, unitPriceMicros, unitSize);
    lines.push({ component, quantity, unit, unitPriceMicros, unitSize, pricePer, amountMicros: amount });
  }
  return lines;
}

/** Exact total of the lines' amounts in µ$ (corrections included, so it may be negative). */
export function totalMicros(lines: readonly { amountMicros: number }[]): number {
  return sumIntegers(lines.map((line) => line.amountMicros));
}
