import { z } from 'zod';
import { startedUnits } from './money';

/** What was measured on one call: the only input of pricing besides the catalog. Integers only. */
export interface CallMeters {
  /** 'web': a browser call, which uses no telephone line (no telephony or media-stream minutes). */
  direction: 'inbound' | 'outbound' | 'web';
  /** 'echo' | 'pipeline' | 'realtime' (realtime per-minute prices only apply to 'realtime'). */
  engine: string;
  /** Seconds the call was connected as Switchboard measured it (answer -> end). */
  measuredConnectedSeconds: number;
  /** Twilio's billed minutes for the leg (status callback `Duration`), null until it arrives. */
  twilioBilledMinutes: number | null;
  /** The media stream's length in ms (0: no stream). */
  streamMs: number;
  /** Caller audio received. */
  callerAudioMs: number;
  /** Agent audio sent to Twilio. */
  agentAudioSentMs: number;
  /** Agent audio confirmed played by marks. */
  agentAudioHeardMs: number;
  sttAudioMs: number;
  ttsCharacters: number;
  ttsAudioMs: number;
  /** ALL input tokens, cached included (OpenAI prompt_tokens). */
  llmInputTokens: number;
  /** The cached part of llmInputTokens. */
  llmCachedInputTokens: number;
  llmOutputTokens: number;
  /** Cached included. */
  realtimeTextInputTokens: number;
  /** Cached included. */
  realtimeAudioInputTokens: number;
  realtimeCachedTextInputTokens: number;
  realtimeCachedAudioInputTokens: number;
  realtimeTextOutputTokens: number;
  realtimeAudioOutputTokens: number;
  /** Inference time attributed to this call (its share of each batch). */
  gpuMicroseconds: number;
  cpuMicroseconds: number;
  /** Post-call analysis (every run of it, re-runs included): tokens of the analysing LLM. */
  analysisInputTokens: number;
  analysisOutputTokens: number;
}

/** What the media path measures on a call: the meters that do not come from the call row (nor from its analysis, after it). */
export type MeasuredCallUsage = Omit<CallMeters, 'direction' | 'engine' | 'measuredConnectedSeconds' | 'twilioBilledMinutes' | 'analysisInputTokens' | 'analysisOutputTokens'>;

/** The part of it the engines report (speech, tokens, inference time), as opposed to the stream's own counters. */
export type MeasuredAiUsage = Omit<MeasuredCallUsage, 'streamMs' | 'callerAudioMs' | 'agentAudioSentMs' | 'agentAudioHeardMs'>;

/**
 * A provider's usage figure as it may be counted: one NaN or negative figure would poison a call's
 * whole cost line (or be refused by the ledger), so it counts as 0. Live calls and post-call analysis
 * both count through this.
 */
export function countableUsage(value: number): number {
  return Number.isFinite(value) && value > 0 ? value : 0;
}

export const NO_AI_USAGE: Readonly<MeasuredAiUsage> = Object.freeze({
  sttAudioMs: 0,
  ttsCharacters: 0,
  ttsAudioMs: 0,
  llmInputTokens: 0,
  llmCachedInputTokens: 0,
  llmOutputTokens: 0,
  realtimeTextInputTokens: 0,
  realtimeAudioInputTokens: 0,
  realtimeCachedTextInputTokens: 0,
  realtimeCachedAudioInputTokens: 0,
  realtimeTextOutputTokens: 0,
  realtimeAudioOutputTokens: 0,
  gpuMicroseconds: 0,
  cpuMicroseconds: 0,
});

export const NO_MEASURED_USAGE: Readonly<MeasuredCallUsage> = Object.freeze({
  ...NO_AI_USAGE,
  streamMs: 0,
  callerAudioMs: 0,
  agentAudioSentMs: 0,
  agentAudioHeardMs: 0,
});

export function emptyCallMeters(direction: CallMeters['direction'], engine: string): CallMeters {
  return { direction, engine, measuredConnectedSeconds: 0, twilioBilledMinutes: null, ...NO_MEASURED_USAGE, analysisInputTokens: 0, analysisOutputTokens: 0 };
}

const count = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

/** Reads meters back from stored JSON; `satisfies` keeps it in step with the interface. */
export const callMetersSchema = z.strictObject({
  direction: z.enum(['inbound', 'outbound', 'web']),
  engine: z.string(),
  measuredConnectedSeconds: count,
  twilioBilledMinutes: count.nullable(),
  streamMs: count,
  callerAudioMs: count,
  agentAudioSentMs: count,
  agentAudioHeardMs: count,
  sttAudioMs: count,
  ttsCharacters: count,
  ttsAudioMs: count,
  llmInputTokens: count,
  llmCachedInputTokens: count,
  llmOutputTokens: count,
  realtimeTextInputTokens: count,
  realtimeAudioInputTokens: count,
  realtimeCachedTextInputTokens: count,
  realtimeCachedAudioInputTokens: count,
  realtimeTextOutputTokens: count,
  realtimeAudioOutputTokens: count,
  gpuMicroseconds: count,
  cpuMicroseconds: count,
  // Meters stored before post-call analysis existed have none.
  analysisInputTokens: count.default(0),
  analysisOutputTokens: count.default(0),
} satisfies Record<keyof CallMeters, z.ZodType>) satisfies z.ZodType<CallMeters>;

/**
 * Telephony minutes to bill: Twilio's own figure once its status callback has arrived (it is what Twilio
 * invoices), else our measure rounded up to started minutes as Twilio does: 61 s = 2, 60 s = 1, 0 s = 0.
 */
export function billedTelephonyMinutes(meters: CallMeters): { minutes: number; source: 'twilio' | 'measured' } {
  if (meters.twilioBilledMinutes !== null) return { minutes: meters.twilioBilledMinutes, source: 'twilio' };
  return { minutes: startedUnits(meters.measuredConnectedSeconds, 60), source: 'measured' };
}
