import type { EngineTimings } from '../contracts';

/** The final transcript of one utterance. */
export interface AsrResult {
  text: string;
  /** Language the engine detected or was told, when it knows (ISO 639-1, e.g. 'en'). */
  language?: string;
  timings: EngineTimings;
  /** Seconds of audio that were transcribed. */
  audioSeconds: number;
}

/** An interim transcript while the caller is still speaking; `stable` once it will not change. */
export interface AsrPartial {
  text: string;
  stable: boolean;
}

/** One utterance: push audio as it arrives, then `finish()` for the final transcript. */
export interface AsrSession {
  /** 16 kHz PCM16 mono. The session copies what it keeps, so callers may reuse the buffer. */
  pushAudio(pcm16k: Int16Array): void;
  onPartial(listener: (partial: AsrPartial) => void): void;
  /** Final transcript of everything pushed. Rejects with an EngineError on failure. */
  finish(): Promise<AsrResult>;
  cancel(): void;
}

export interface AsrEngine {
  readonly name: string;
  readonly sampleRate: 16000;
  readonly supportsPartials: boolean;
  createSession(options: { callId: string; language?: string; prompt?: string }): AsrSession;
}
