/**
 * The fixed numbers of the latency bench: the fake engines' scripted delays, the agent config the
 * calls run with, and the targets from the issue. Kept in one place so the printed report, the
 * JSON line and the checks all quote the same values.
 */

/** Scripted engine delays (nominal). The fakes measure what they actually waited; both are reported. */
export const ENGINE_DELAYS = {
  /** AsrSession.finish() -> final transcript. */
  asrMs: 40,
  /** LlmEngine.stream() -> first text delta. */
  llmFirstTokenMs: 120,
  /** TtsEngine.synthesize() -> first audio chunk. */
  ttsFirstByteMs: 60,
} as const;

/** Between the LLM's later deltas (they do not gate the first reply frame). */
export const LLM_DELTA_INTERVAL_MS = 15;
/** Audio per synthesised text chunk, in 20 ms chunks at 16 kHz. */
export const TTS_SAMPLE_RATE = 16_000;
export const TTS_AUDIO_MS = 1000;
export const TTS_CHUNK_MS = 20;
/**
 * After the first chunk the fake TTS streams at 5x real time (5 chunks every 20 ms), like a
 * streaming TTS server, rather than dumping a second of audio in one go.
 */
export const TTS_CHUNKS_PER_BURST = 5;
export const TTS_BURST_INTERVAL_MS = 20;

/** Defaults except what a benchmark must pin: no greeting, no idle prompts during the run. */
export const BENCH_AGENT_CONFIG = {
  firstMessage: null,
  idle: { promptAfterMs: 600_000 },
} as const;
/** The config defaults the numbers below rely on (checked against the parsed config at start-up). */
export const TURN_MIN_SILENCE_MS = 500;
export const INTERRUPTION_MIN_SPEECH_MS = 400;
/** Silero decides per 256-sample chunk at 8 kHz. */
export const VAD_CHUNK_MS = 32;
/**
 * The barge-in detection time: the VAD can only count speech in whole chunks, so minSpeechMs of
 * speech is known at the first chunk boundary at or after it (400 ms -> 13 chunks = 416 ms). What
 * the platform adds on top (the VAD's onset, inference, the decision, the `clear`) is the budget.
 */
export const BARGE_IN_DETECTION_MS = Math.ceil(INTERRUPTION_MIN_SPEECH_MS / VAD_CHUNK_MS) * VAD_CHUNK_MS;

export const TARGETS = {
  platformOverheadP50Ms: 3,
  platformOverheadP99Ms: 10,
  /** Barge-in: clear sent within the detection time (BARGE_IN_DETECTION_MS) plus this, at p99. */
  bargeInOverheadP99Ms: 40,
} as const;

export const DEFAULT_CALLS = 100;
/** Question turns per call before the barge-in pair. */
export const DEFAULT_TURNS = 3;
/** Calls start spread over this long, not all in one instant. */
export const RAMP_MS = 2000;
/** Any single wait in a call's script (a reply, a frame, the end of the call) is bounded by this. */
export const STEP_TIMEOUT_MS = 20_000;
