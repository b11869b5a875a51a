/**
 * What turn detection reports. Offsets are milliseconds on the stream's timeline (all audio ever
 * pushed), at the VAD's 32 ms chunk resolution. Audio is 8 kHz 16-bit PCM.
 */
export type TurnEndReason = 'silence' | 'end_of_turn_model' | 'max_duration';

export interface SpeechStartedEvent {
  type: 'speech_started';
  /** Where speech began (the first chunk of it). */
  startMs: number;
  /** When it was confirmed (after minSpeechMs of speech). */
  detectedAtMs: number;
  /** `audio` starts here: startMs - prefixPaddingMs (not before 0). */
  audioStartMs: number;
  /** The audio from audioStartMs to detectedAtMs. */
  audio: Int16Array;
}

export interface TurnEndedEvent {
  type: 'turn_ended';
  reason: TurnEndReason;
  startMs: number;
  /** Where speech stopped: the start of the silence that ended the turn. */
  endMs: number;
  detectedAtMs: number;
  audioStartMs: number;
  /** The utterance: audioStartMs to endMs, prefix padding included. */
  audio: Int16Array;
  /** The classifier's answer when it ended the turn ('end_of_turn_model'). */
  endOfTurnProbability?: number;
}

/** The end-of-turn classifier failed; the turn falls back to ending on minSilenceMs. */
export interface EndOfTurnModelFailedEvent {
  type: 'end_of_turn_model_failed';
  atMs: number;
  error: Error;
}

export type TurnEvent = SpeechStartedEvent | TurnEndedEvent | EndOfTurnModelFailedEvent;
export type TurnEventListener = (event: TurnEvent) => void;
