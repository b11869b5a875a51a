import { countableUsage as countable, NO_AI_USAGE, type MeasuredAiUsage } from '@switchboard/billing';
import type { InferenceDevice, LlmUsage, SpeechToSpeechUsage } from '@switchboard/inference';

/** What the meter needs of a realtime session: its running usage totals. */
export interface UsageTotalsSource {
  readonly usageTotals: Readonly<SpeechToSpeechUsage>;
}

/**
 * Accumulates one call's AI usage. Sums are kept exact (seconds as floats) and rounded once, in
 * `snapshot()`, so thousands of small additions do not drift by a rounding error each.
 */
export class CallUsageMeter {
  private sttAudioSeconds = 0;
  private ttsCharacters = 0;
  private ttsAudioSeconds = 0;
  private llmInputTokens = 0;
  private llmCachedInputTokens = 0;
  private llmOutputTokens = 0;
  private gpuSeconds = 0;
  private cpuSeconds = 0;
  /** A Set: tracking the same session twice must not count it twice. */
  private readonly speechToSpeechSessions = new Set<UsageTotalsSource>();

  addSttAudio(seconds: number): void {
    this.sttAudioSeconds += countable(seconds);
  }

  addTts(characters: number, audioSeconds: number): void {
    this.ttsCharacters += countable(characters);
    this.ttsAudioSeconds += countable(audioSeconds);
  }

  addLlmUsage(usage: LlmUsage): void {
    this.llmInputTokens += countable(usage.inputTokens);
    this.llmCachedInputTokens += countable(usage.cachedInputTokens);
    this.llmOutputTokens += countable(usage.outputTokens);
  }

  /** A realtime session's running totals are read at snapshot time (several sessions per call possible after reconnects: summed). */
  trackSpeechToSpeech(session: UsageTotalsSource): void {
    this.speechToSpeechSessions.add(session);
  }

  /** Every provider but CPU is a GPU (CUDA, WebGPU): charged at the GPU rate. */
  addCompute(device: InferenceDevice, seconds: number): void {
    if (device !== 'cpu') this.gpuSeconds += countable(seconds);
    else this.cpuSeconds += countable(seconds);
  }

  snapshot(): MeasuredAiUsage {
    const usage: MeasuredAiUsage = {
      ...NO_AI_USAGE,
      sttAudioMs: Math.round(this.sttAudioSeconds * 1000),
      ttsCharacters: Math.round(this.ttsCharacters),
      ttsAudioMs: Math.round(this.ttsAudioSeconds * 1000),
      llmInputTokens: Math.round(this.llmInputTokens),
      llmCachedInputTokens: Math.round(this.llmCachedInputTokens),
      llmOutputTokens: Math.round(this.llmOutputTokens),
      gpuMicroseconds: Math.round(this.gpuSeconds * 1_000_000),
      cpuMicroseconds: Math.round(this.cpuSeconds * 1_000_000),
    };
    for (const { usageTotals } of this.speechToSpeechSessions) {
      usage.realtimeTextInputTokens += Math.round(countable(usageTotals.inputTextTokens));
      usage.realtimeAudioInputTokens += Math.round(countable(usageTotals.inputAudioTokens));
      usage.realtimeCachedTextInputTokens += Math.round(countable(usageTotals.inputCachedTextTokens));
      usage.realtimeCachedAudioInputTokens += Math.round(countable(usageTotals.inputCachedAudioTokens));
      usage.realtimeTextOutputTokens += Math.round(countable(usageTotals.outputTextTokens));
      usage.realtimeAudioOutputTokens += Math.round(countable(usageTotals.outputAudioTokens));
    }
    return usage;
  }
}
