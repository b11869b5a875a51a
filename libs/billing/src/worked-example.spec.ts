import { emptyCallMeters, type CallMeters } from './call-meters';
import { formatMicros } from './money';
import { DEFAULT_PRICES, HOSTED_SPEECH_TO_SPEECH_PER_MINUTE } from './price-catalog';
import { priceCall, totalMicros } from './price-call';

/**
 * The worked example of docs/cost-accounting.md, checked: if pricing changes, this fails and that
 * page must be updated with it.
 */
describe('README worked example', () => {
  // A 61 s inbound call to a pipeline agent: three replies, remote STT/LLM/TTS, VAD and turn
  // detection on a GPU.
  const pipelineCall: CallMeters = {
    ...emptyCallMeters('inbound', 'pipeline'),
    measuredConnectedSeconds: 61,
    streamMs: 60_800,
    callerAudioMs: 60_800,
    agentAudioSentMs: 25_000,
    agentAudioHeardMs: 23_500,
    sttAudioMs: 14_200,
    ttsCharacters: 420,
    ttsAudioMs: 25_000,
    llmInputTokens: 3_600,
    llmCachedInputTokens: 1_200,
    llmOutputTokens: 120,
    gpuMicroseconds: 2_400_000,
    cpuMicroseconds: 900_000,
  };

  it('prices the pipeline call with the default catalog line by line', () => {
    const lines = priceCall(pipelineCall, DEFAULT_PRICES);
    expect(lines.map((line) => [line.component, line.quantity, line.amountMicros])).toEqual([
      ['telephony', 2, 17_000], // 61 s = 2 started minutes x 8 500
      ['media_streams', 2, 8_000], // 60.8 s of stream = 2 started minutes x 4 000
      ['stt', 14_200, 1_420], // 14.2 s x 6 000 / 60 s
      ['tts_characters', 420, 6_300], // 420 x 15 000 000 / 1M
      ['tts_audio', 25_000, 0], // shown, but this catalog prices speech by character
      ['llm_input', 2_400, 360], // (3 600 - 1 200 cached) x 150 000 / 1M
      ['llm_cached_input', 1_200, 90], // 1 200 x 75 000 / 1M
      ['llm_output', 120, 72], // 120 x 600 000 / 1M
      ['gpu', 2_400_000, 1_666], // 2.4 s x 694 = 1 665.6, rounded half up
      ['cpu', 900_000, 13], // 0.9 s x 14 = 12.6
    ]);
    expect(formatMicros(totalMicros(lines))).toBe('0.034921');
  });

  it('prices the same minute of conversation at hosted speech-to-speech per-minute rates for comparison', () => {
    const realtimeCall: CallMeters = { ...emptyCallMeters('inbound', 'realtime'), measuredConnectedSeconds: 61, streamMs: 60_800, callerAudioMs: 60_800, agentAudioSentMs: 25_000 };
    const lines = priceCall(realtimeCall, HOSTED_SPEECH_TO_SPEECH_PER_MINUTE);
    expect(lines.map((line) => [line.component, line.amountMicros])).toEqual([
      ['telephony', 17_000],
      ['media_streams', 8_000],
      ['realtime_audio_input_minutes', 60_800], // 60.8 s x $0.06/min
      ['realtime_audio_output_minutes', 100_000], // 25 s x $0.24/min
    ]);
    expect(formatMicros(totalMicros(lines))).toBe('0.185800');
  });
});
