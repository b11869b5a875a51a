import type { EngineError } from '../contracts/engine-error';
import type { EngineTimings } from '../contracts/engine-timings';

/**
 * The contract between the conversation runtime and a speech-to-speech model: caller audio in,
 * assistant audio out, with the model doing its own turn detection. Provider-neutral on purpose
 * (no provider field names), so a remote API (OpenAI Realtime) and a native local model plug in
 * the same way.
 */

/**
 * Audio on the wire between the runtime and the engine. `mulaw8k` is G.711 mu-law at 8 kHz, what
 * Twilio carries, so an engine that speaks it lets the call pass audio through untouched.
 * `pcm16_<rate>` is 16-bit little-endian mono PCM at that sample rate.
 */
export type SpeechAudioFormat = 'mulaw8k' | 'pcm16_16k' | 'pcm16_24k';

/** Bytes per millisecond of each format (mu-law: 1 byte per sample; PCM16: 2). */
export const SPEECH_AUDIO_BYTES_PER_MS: Readonly<Record<SpeechAudioFormat, number>> = {
  mulaw8k: 8,
  pcm16_16k: 32,
  pcm16_24k: 48,
};

/** A function the model may call; `parametersSchema` is a JSON Schema object. */
export interface SpeechToSpeechTool {
  name: string;
  description?: string;
  parametersSchema: Record<string, unknown>;
}

/** Voice-activity turn detection: silence after speech ends the caller's turn. */
export interface VoiceActivityTurnDetection {
  type: 'server_vad';
  /** Speech probability threshold, 0..1 (higher: needs louder speech). */
  threshold?: number;
  /** Audio kept before the detected speech start. */
  prefixPaddingMs?: number;
  /** Silence that ends the turn. */
  silenceDurationMs?: number;
}

/** Semantic turn detection: the model judges whether the caller has finished their thought. */
export interface SemanticTurnDetection {
  type: 'semantic_vad';
  /** How readily the model ends the caller's turn. */
  eagerness?: 'low' | 'medium' | 'high' | 'auto';
}

export type SpeechToSpeechTurnDetection = VoiceActivityTurnDetection | SemanticTurnDetection;

export interface SpeechToSpeechConnectOptions {
  /** The call this session serves (usage and logs are keyed by it). */
  callId: string;
  /** System prompt. */
  instructions: string;
  /** Engine-specific voice name; the engine's default when absent. */
  voice?: string;
  tools?: readonly SpeechToSpeechTool[];
  turnDetection: SpeechToSpeechTurnDetection;
  /** Aborts connecting (the promise rejects with an EngineError 'cancelled'). */
  signal?: AbortSignal;
}

/** Tokens one response consumed, as billed. Counts the provider did not report are 0. */
export interface SpeechToSpeechUsage {
  inputTextTokens: number;
  inputAudioTokens: number;
  /** Input tokens served from the prompt cache (included in the input counts above). */
  inputCachedTokens: number;
  inputCachedTextTokens: number;
  inputCachedAudioTokens: number;
  outputTextTokens: number;
  outputAudioTokens: number;
  totalTokens: number;
}

export interface SpeechToSpeechAudioEvent {
  /** Assistant audio in the engine's `outputFormat`, in playback order. */
  audio: Uint8Array;
  /** The response and the item (the assistant message) it belongs to; `truncate` takes the item id. */
  responseId: string;
  itemId: string;
}

export interface SpeechActivityEvent {
  /** The conversation item the caller's speech becomes. */
  itemId: string;
  /** Position in the session's input audio stream. */
  audioMs: number;
}

export interface SpeechToSpeechTranscriptEvent {
  role: 'user' | 'assistant';
  itemId: string;
  /** Partial: the newly added fragment. Final: the whole utterance. */
  text: string;
  final: boolean;
  /** Assistant only: the response was cancelled (barge-in), so the caller heard at most part of it. */
  interrupted?: boolean;
}

export interface SpeechToSpeechToolCallEvent {
  /** Pass back to `submitToolResult`. */
  callId: string;
  name: string;
  /** The model's arguments as a JSON string (unparsed: the model may produce invalid JSON). */
  arguments: string;
  responseId: string;
}

export type SpeechToSpeechResponseStatus = 'completed' | 'cancelled' | 'incomplete' | 'failed';

export interface SpeechToSpeechResponseDoneEvent {
  responseId: string;
  status: SpeechToSpeechResponseStatus;
  /** Absent only when the provider reported none; a cancelled response is still billed. */
  usage: SpeechToSpeechUsage | undefined;
  /**
   * `firstResultMs`: first audio byte, from the caller's end of speech (speech_stopped) or from the
   * explicit response request, whichever started this response. `totalMs`: same start to done.
   */
  timings: EngineTimings;
}

export interface SpeechToSpeechClosedEvent {
  /** True when `close()` ended the session; false when the connection was lost. */
  byClient: boolean;
  /** Why the connection was lost (`retryable`: a new session may succeed). */
  error?: EngineError;
}

/** Listener signatures, by event name. */
export interface SpeechToSpeechSessionEvents {
  audio: (event: SpeechToSpeechAudioEvent) => void;
  /** The caller started talking: the barge-in trigger. */
  speech_started: (event: SpeechActivityEvent) => void;
  speech_stopped: (event: SpeechActivityEvent) => void;
  transcript: (event: SpeechToSpeechTranscriptEvent) => void;
  tool_call: (event: SpeechToSpeechToolCallEvent) => void;
  response_done: (event: SpeechToSpeechResponseDoneEvent) => void;
  /** A problem the session survived or, when followed by `closed`, the one that ended it. */
  error: (error: EngineError) => void;
  closed: (event: SpeechToSpeechClosedEvent) => void;
}

export type SpeechToSpeechEventName = keyof SpeechToSpeechSessionEvents;

export interface SpeechToSpeechSession {
  readonly callId: string;
  /** Connecting: `totalMs` until the session was configured and ready, `attempts` made. */
  readonly connectTimings: EngineTimings;
  /** Sum of every response's usage so far (for the cost ledger). */
  readonly usageTotals: Readonly<SpeechToSpeechUsage>;
  readonly isOpen: boolean;

  on<E extends SpeechToSpeechEventName>(event: E, listener: SpeechToSpeechSessionEvents[E]): this;
  off<E extends SpeechToSpeechEventName>(event: E, listener: SpeechToSpeechSessionEvents[E]): this;

  /**
   * Caller audio in the engine's `inputFormat`, sent as is. Returns false (and sends nothing) once
   * the session is closed: the media path calls this every frame and must not have to catch.
   */
  sendAudio(audio: Uint8Array): boolean;
  /** The result of a `tool_call`; the model then continues with a new response. */
  submitToolResult(callId: string, output: string): void;
  /** Ask the model to speak now (e.g. the greeting), optionally with instructions for this response only. */
  createResponse(options?: { instructions?: string }): void;
  /**
   * Stop the response being generated; its audio and transcript fragments that still arrive are
   * dropped. Returns false when no response was in progress (nothing sent).
   */
  cancelResponse(): boolean;
  /** Tell the model the caller heard only the first `audioEndMs` of that assistant item. */
  truncate(itemId: string, audioEndMs: number): void;
  /** Closes the connection; idempotent; resolves once the socket is closed. */
  close(): Promise<void>;
}

export interface SpeechToSpeechEngine {
  /** e.g. 'openai-realtime'. */
  readonly name: string;
  readonly inputFormat: SpeechAudioFormat;
  readonly outputFormat: SpeechAudioFormat;
  /**
   * Resolves once the session is configured and ready for audio. Attach listeners as soon as it
   * resolves, before awaiting anything else: events are not buffered for late listeners. Rejects
   * with an EngineError (`retryable` says whether trying again may work).
   */
  connect(options: SpeechToSpeechConnectOptions): Promise<SpeechToSpeechSession>;
}
