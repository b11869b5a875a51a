import { type SpeechToSpeechUsage, zeroUsage } from '@switchboard/inference';
import { NO_AI_USAGE } from '@switchboard/billing';
import { CallUsageMeter } from './call-usage-meter';

/** A realtime session's running totals, changed in place as responses finish (as the real session does). */
class RunningTotals {
  readonly usageTotals: SpeechToSpeechUsage = zeroUsage();
}

describe('CallUsageMeter', () => {
  it('reports nothing for a fresh call', () => {
    expect(new CallUsageMeter().snapshot()).toEqual(NO_AI_USAGE);
  });

  it('sums STT and TTS seconds exactly and rounds to ms once, at snapshot', () => {
    const meter = new CallUsageMeter();
    // 0.4 ms each: rounding every addition would lose them all; the exact sum is 2 ms.
    for (let i = 0; i < 5; i++) meter.addSttAudio(0.0004);
    meter.addTts(12, 0.8004);
    meter.addTts(30, 1.2);
    const usage = meter.snapshot();
    expect(usage.sttAudioMs).toBe(2);
    expect(usage.ttsCharacters).toBe(42);
    expect(usage.ttsAudioMs).toBe(2000);
  });

  it('sums LLM usage over replies, cached tokens kept apart', () => {
    const meter = new CallUsageMeter();
    meter.addLlmUsage({ inputTokens: 1200, cachedInputTokens: 1024, outputTokens: 40 });
    meter.addLlmUsage({ inputTokens: 1300, cachedInputTokens: 0, outputTokens: 25 });
    expect(meter.snapshot()).toMatchObject({ llmInputTokens: 2500, llmCachedInputTokens: 1024, llmOutputTokens: 65 });
  });

  it('reads realtime totals at snapshot time, maps each count, and sums sessions (a reconnect)', () => {
    const meter = new CallUsageMeter();
    const first = new RunningTotals();
    const second = new RunningTotals();
    meter.trackSpeechToSpeech(first);
    Object.assign(first.usageTotals, {
      inputTextTokens: 100,
      inputAudioTokens: 400,
      inputCachedTokens: 96,
      inputCachedTextTokens: 64,
      inputCachedAudioTokens: 32,
      outputTextTokens: 20,
      outputAudioTokens: 300,
      totalTokens: 820,
    });
    expect(meter.snapshot()).toMatchObject({
      realtimeTextInputTokens: 100,
      realtimeAudioInputTokens: 400,
      realtimeCachedTextInputTokens: 64,
      realtimeCachedAudioInputTokens: 32,
      realtimeTextOutputTokens: 20,
      realtimeAudioOutputTokens: 300,
    });

    meter.trackSpeechToSpeech(second);
    // The same session tracked again (a retried registration) still counts once.
    meter.trackSpeechToSpeech(first);
    first.usageTotals.outputAudioTokens += 50;
    second.usageTotals.inputAudioTokens = 10;
    second.usageTotals.outputAudioTokens = 7;
    const usage = meter.snapshot();
    expect(usage.realtimeAudioInputTokens).toBe(410);
    expect(usage.realtimeAudioOutputTokens).toBe(357);
    expect(usage.realtimeTextInputTokens).toBe(100);
  });

  it('routes compute by device (cuda to GPU, cpu to CPU) in rounded microseconds', () => {
    const meter = new CallUsageMeter();
    meter.addCompute('cuda', 0.0000004);
    meter.addCompute('cuda', 0.0000004);
    meter.addCompute('cuda', 0.003);
    meter.addCompute('cpu', 0.25);
    expect(meter.snapshot()).toMatchObject({ gpuMicroseconds: 3001, cpuMicroseconds: 250_000 });
  });

  it('charges WebGPU time as GPU time, like CUDA', () => {
    const meter = new CallUsageMeter();
    meter.addCompute('webgpu', 0.002);
    meter.addCompute('cuda', 0.001);
    expect(meter.snapshot()).toMatchObject({ gpuMicroseconds: 3000, cpuMicroseconds: 0 });
  });

  it('ignores NaN, infinite and negative figures instead of poisoning the totals', () => {
    const meter = new CallUsageMeter();
    meter.addSttAudio(1);
    meter.addSttAudio(Number.NaN);
    meter.addTts(Number.POSITIVE_INFINITY, -2);
    meter.addCompute('cpu', -1);
    expect(meter.snapshot()).toEqual({ ...NO_AI_USAGE, sttAudioMs: 1000 });
  });
});
