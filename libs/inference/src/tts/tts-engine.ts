import type { EngineTimings } from '../contracts';

/** What a finished synthesis reports. */
export interface TtsResult {
  timings: EngineTimings;
  /** Characters of input text synthesized (for cost accounting). */
  characters: number;
  audioSeconds: number;
}

/** PCM16 mono chunks at `sampleRate`, yielded as soon as each is ready. */
export interface TtsStream extends AsyncIterable<Int16Array> {
  readonly sampleRate: number;
  /** Resolves when the last chunk was yielded; rejects with an EngineError on failure. */
  readonly result: Promise<TtsResult>;
  cancel(): void;
}

export interface TtsEngine {
  readonly name: string;
  readonly sampleRate: number;
  synthesize(text: string, options: { callId: string; voice?: string; signal?: AbortSignal }): TtsStream;
}
