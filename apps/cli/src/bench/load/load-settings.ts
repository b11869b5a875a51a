/**
 * The fixed numbers of `npm run bench:load`: what each simulated caller says and when, the fake
 * engines' scripted delays, the agent config, and the targets from issue 13. One place, so the
 * report, the JSON line and the checks quote the same values.
 */

/** Scripted delays of the OpenAI-compatible fakes (they answer nothing else). */
export const ENGINE_DELAYS = { asrMs: 40, llmFirstTokenMs: 120, ttsFirstByteMs: 60 } as const;

/** The reply the fake LLM streams: one sentence, so one TTS request and one continuous reply. */
export const REPLY_TEXT = ['Sure,', ' we open', ' at nine', ' tomorrow morning.'];
/** Between the LLM's deltas. */
export const LLM_DELTA_INTERVAL_MS = 15;

/** The fake TTS: a continuous tone (so any inserted silence is a measurable gap) at OpenAI's 24 kHz. */
export const TTS_SAMPLE_RATE = 24_000;
export const TTS_AUDIO_MS = 1200;
/** It streams faster than real time, in uneven chunks, like a streaming TTS server. */
export const TTS_CHUNK_BYTES = [4801, 1234, 161, 9600];
export const TTS_CHUNK_INTERVAL_MS = 20;

/** Caller script: each utterance, then this much silence before the next (random in range). */
export const UTTERANCES_PER_CALL = 3;
export const SILENCE_AFTER_MS: readonly [number, number] = [4000, 8000];
/** Callers start this far apart (a burst, as Twilio delivers a busy line's calls). */
export const ARRIVAL_SPACING_MS = 8;
/** Utterances, from test/fixtures/speech (flite, 0.2 s of silence padded each side). */
export const FIXTURES = ['hours', 'transfer', 'interrupt'] as const;

/** Concurrency levels of a default run. */
export const DEFAULT_LEVELS = [1, 50, 100, 250, 400];

/**
 * A caller whose reply has not started when its next utterance is due keeps waiting (sending
 * silence), as a person on the phone does, up to this long after the end of its speech; a reply not
 * heard by then counts as unanswered. So "utterances answered" counts replies the server lost, not
 * replies a slow machine delayed past the scripted silence: the delay shows in the reply latency,
 * which is compared with the reference commit on a slow machine (CI on 2026-11-27 read reply p95
 * 4.8 s at 250 calls for the reference and 2.3 s for the change, and the 4-8 s silence then cut
 * off replies that were only late).
 */
export const REPLY_WAIT_MAX_MS = 15_000;

/** The agent every call runs: defaults except what the numbers rely on. */
export function benchAgentConfig(engineBaseUrl: string): object {
  const remote = { provider: 'openai', baseUrl: engineBaseUrl };
  return {
    firstMessage: null,
    idle: { promptAfterMs: 600_000 },
    turn: { minSilenceMs: 500 },
    stt: { ...remote, model: 'bench-asr' },
    llm: { ...remote, model: 'bench-llm' },
    tts: { ...remote, model: 'bench-tts', voice: 'alloy' },
  };
}

export const TARGETS = {
  /** At 250 calls: caller-observed reply p50 within this of N=1's, p95 within the next. */
  p50MarginMs: 50,
  p95MarginMs: 100,
  eventLoopP99Ms: 20,
  checkedLevel: 250,
} as const;
