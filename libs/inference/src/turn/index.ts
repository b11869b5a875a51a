export { TurnDetector } from './turn-detector';
export type { TurnDetectorOptions } from './turn-detector-options';
export type { EndOfTurnClassifier } from './end-of-turn-classifier';
export type { TurnEvent, TurnEventListener, TurnEndReason, SpeechStartedEvent, TurnEndedEvent, EndOfTurnModelFailedEvent } from './turn-events';
export { SpeechHysteresis } from './speech-hysteresis';
export { CallerAudio } from './caller-audio';
export type { CallerAudioOptions } from './caller-audio';
