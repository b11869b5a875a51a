import type { SpeechToSpeechUsage } from './speech-to-speech-engine';

export function zeroUsage(): SpeechToSpeechUsage {
  return {
    inputTextTokens: 0,
    inputAudioTokens: 0,
    inputCachedTokens: 0,
    inputCachedTextTokens: 0,
    inputCachedAudioTokens: 0,
    outputTextTokens: 0,
    outputAudioTokens: 0,
    totalTokens: 0,
  };
}

/** Adds `usage` into `totals` in place (a session keeps one running total for the cost ledger). */
export function addUsage(totals: SpeechToSpeechUsage, usage: SpeechToSpeechUsage): void {
  for (const key of Object.keys(totals) as (keyof SpeechToSpeechUsage)[]) totals[key] += usage[key];
}
