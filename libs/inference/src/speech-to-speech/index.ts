export type {
  SemanticTurnDetection,
  SpeechActivityEvent,
  SpeechAudioFormat,
  SpeechToSpeechAudioEvent,
  SpeechToSpeechClosedEvent,
  SpeechToSpeechConnectOptions,
  SpeechToSpeechEngine,
  SpeechToSpeechEventName,
  SpeechToSpeechResponseDoneEvent,
  SpeechToSpeechResponseStatus,
  SpeechToSpeechSession,
  SpeechToSpeechSessionEvents,
  SpeechToSpeechTool,
  SpeechToSpeechToolCallEvent,
  SpeechToSpeechTranscriptEvent,
  SpeechToSpeechTurnDetection,
  SpeechToSpeechUsage,
  VoiceActivityTurnDetection,
} from './speech-to-speech-engine';
export { SPEECH_AUDIO_BYTES_PER_MS } from './speech-to-speech-engine';
export { validateConnectOptions } from './connect-options.validation';
export { ResponseTracker } from './response-tracker';
export { addUsage, zeroUsage } from './speech-to-speech-usage';
export { OpenAiRealtimeEngine } from './openai-realtime/openai-realtime.engine';
export {
  OPENAI_REALTIME_DEFAULT_BASE_URL,
  OPENAI_REALTIME_DEFAULT_CIRCUIT_BREAKER,
  OPENAI_REALTIME_ENGINE,
  type OpenAiRealtimeEngineOptions,
  type OpenAiRealtimeProtocol,
} from './openai-realtime/openai-realtime.options';
export type { OpenAiRealtimeSession } from './openai-realtime/openai-realtime.session';
export { observedSpeechToSpeech } from './observed-speech-to-speech';
