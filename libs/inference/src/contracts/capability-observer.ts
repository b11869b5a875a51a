import type { AsrResult } from '../asr/asr-engine';
import type { LlmEvent } from '../llm/llm-engine';
import type { SpeechToSpeechResponseDoneEvent, SpeechToSpeechSession } from '../speech-to-speech/speech-to-speech-engine';
import type { TtsResult } from '../tts/tts-engine';
import type { EngineError } from './engine-error';

/**
 * The one hook through which every capability (ASR, LLM, TTS, speech-to-speech) reports what a
 * request used and how long it took, so a server meters and traces a call from one observer
 * instead of stacking a wrapper per concern. Each request gets its own report; the observed engine
 * (see `observedAsr`, `observedLlm`, `observedTts`, `observedSpeechToSpeech`) calls exactly one of
 * a report's ending methods, and none of an observer's methods may throw: they run in the media path.
 */
export interface CapabilityObserver {
  /** A final transcript was asked for (`finish()`): for a remote engine, the request itself. */
  transcription(request: EngineRequestInfo): TranscriptionReport;
  /** An LLM request starts (its stream is first read); a reply with tool rounds makes one per round. */
  completion(request: EngineRequestInfo): CompletionReport;
  /** A synthesis starts; `text` is what will be billed when the engine reports nothing. */
  synthesis(request: EngineRequestInfo & { text: string }): SynthesisReport;
  /** A speech-to-speech session is being connected; the report then hears the session's life. */
  speechToSpeech(request: EngineRequestInfo): SpeechToSpeechReport;
}

/** Which call a request serves, and which engine serves it. */
export interface EngineRequestInfo {
  callId: string;
  engineName: string;
}

export interface TranscriptionReport {
  /** The transcript came back: its audio seconds and timings (first partial, total, attempts). */
  transcribed(result: AsrResult): void;
  /** No transcript (a cancelled session's finish() rejects too). */
  failed(error: unknown): void;
}

export type LlmDoneEvent = Extract<LlmEvent, { type: 'done' }>;

export interface CompletionReport {
  /** The reply's last event (tokens, finish reason, first token time), before the consumer sees it. */
  done(event: LlmDoneEvent, toolCalls: number): void;
  failed(error: unknown): void;
  /** The stream is over (always, last): `aborted` when the call stopped the request (a barge-in). */
  ended(aborted: boolean): void;
}

/** Audio a synthesis handed to its consumer. */
export interface SynthesizedAudio {
  bytes: number;
  seconds: number;
}

export interface SynthesisReport {
  /** The engine finished and reported its own figures. */
  synthesized(result: TtsResult, audio: SynthesizedAudio): void;
  /** The engine failed (its stream threw or its `result` rejected), after `audio` was handed on. */
  failed(error: unknown, audio: SynthesizedAudio): void;
  /** The call cancelled it (a barge-in), after `audio` was handed on. */
  cancelled(audio: SynthesizedAudio): void;
}

export interface SpeechToSpeechReport {
  /** The session is ready; reported before the caller gets it. */
  connected(session: SpeechToSpeechSession): void;
  /** Connecting failed. */
  failed(error: unknown): void;
  /** A response is over (completed, cancelled or failed), with its tokens and timings. */
  responseDone(event: SpeechToSpeechResponseDoneEvent): void;
  /** A problem the session reported outside any response. */
  sessionError(error: EngineError): void;
}
