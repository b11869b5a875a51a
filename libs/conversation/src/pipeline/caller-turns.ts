import { CallerAudio, type SpeechStartedEvent, TurnDetector, type TurnEndedEvent, type VadFrame } from '@switchboard/inference';
import { CallClock } from '../call/call-clock';
import type { AgentConfig } from '@switchboard/agent-config';
import type { ConversationRecorder } from '../records/conversation-records';
import type { PipelineEngines } from './pipeline-engines';
import { TurnTranscription } from './turn-transcription';

/** What the caller said for one turn, and where it sits on the call clock. */
export interface UserTurnTiming {
  startMs: number | null;
  endOfSpeechMs: number | null;
  endOfTurnFrameMs: number | null;
  endOfTurnMs: number;
  asrFinalMs: number | null;
}

/** What the pipeline session does with the caller's speech; CallerTurns only hears it. */
export interface CallerTurnHandlers {
  /** Every VAD frame, before the turn detector sees it (barge-in and the speculation's pause timer). */
  onFrame(frame: VadFrame): void;
  /** The caller started speaking (their turn's recognition opens right after). */
  onSpeechStarted(): void;
  /** The caller's turn ended; `asr` is its recognition (undefined when none was open). */
  onTurnEnded(event: TurnEndedEvent, asr: TurnTranscription | undefined, timing: UserTurnTiming): void;
  onStablePartial(text: string): void;
  /** A voicemail or the end of the call: what the caller says is no turn any more. */
  ignoresCaller(): boolean;
  fail(code: string, error: unknown): void;
}

/**
 * The caller's side of a pipeline call: their audio buffered once, the VAD and turn detector on it,
 * each turn recognised from its start of speech, and where each turn sits on the call clock. The
 * session decides what a turn means (an answer, a backchannel, a barge-in).
 */
export class CallerTurns {
  /**
   * The caller's audio, buffered once for the call: turn detection reads utterances from it, the
   * recogniser re-reads from the start of speech, waterfalls map stream positions to arrival times.
   * 10 s: a turn's audio as the turn events carry it is its last 10 s (the recogniser gets the whole
   * turn, streamed from the start of speech as it comes).
   */
  private readonly audio = new CallerAudio({ sampleRate: 8000, keepSeconds: 10 });
  private detector: TurnDetector | undefined;
  /** The caller's turn being recognised, from its start of speech to its end. */
  private transcription: TurnTranscription | undefined;
  private speaking = false;

  constructor(
    private readonly context: { callId: string; recorder: ConversationRecorder },
    private readonly config: AgentConfig,
    private readonly clock: CallClock,
    private readonly handlers: CallerTurnHandlers,
  ) {}

  /** From the start of the caller's speech to the end of their turn. */
  get callerSpeaking(): boolean {
    return this.speaking;
  }

  /** How much caller audio has been heard, in ms. */
  get heardMs(): number {
    return this.audio.totalSamples / 8;
  }

  /** Where a position in the caller's audio stream arrived on the call clock (null: no longer known). */
  arrivalOf(streamMs: number): number | null {
    return this.audio.arrivalOf(streamMs) ?? null;
  }

  /** The engines are ready: the VAD and the turn detector start listening. */
  listen(engines: PipelineEngines): void {
    const turn = this.config.turn;
    // Listening before the detector does: barge-in and the pause tracker see each frame first.
    engines.vad.listen({ onFrame: (frame) => this.handlers.onFrame(frame), onError: (error) => this.handlers.fail('vad_failed', error) });
    this.detector = new TurnDetector(engines.vad, {
      threshold: turn.threshold,
      minSpeechMs: turn.minSpeechMs,
      minSilenceMs: turn.minSilenceMs,
      prefixPaddingMs: turn.prefixPaddingMs,
      endOfTurnClassifier: turn.endOfTurnModel ? engines.endOfTurnClassifier : undefined,
    }, this.audio);
    this.detector.onEvent((event) => {
      if (this.handlers.ignoresCaller()) return;
      if (event.type === 'speech_started') this.onSpeechStarted(engines, event);
      else if (event.type === 'turn_ended') this.onTurnEnded(event);
      else this.context.recorder.event('end_of_turn_model_failed', { message: event.error.message });
    });
  }

  /** Caller audio (PCM16, 8 kHz) that arrived at `atMs`; the detector must be listening. */
  push(pcm: Int16Array, atMs: number): void {
    this.audio.append(pcm, atMs);
    this.transcription?.push(pcm);
    // The VAD stream orders the chunks and delivers their frames to the session and the detector.
    try {
      this.detector!.push(pcm);
    } catch (error) {
      this.handlers.fail('vad_failed', error);
    }
  }

  /** The turn being heard is dropped unanswered (a voicemail starts). */
  dropTurn(): void {
    this.transcription?.cancel();
    this.transcription = undefined;
    this.speaking = false;
  }

  close(): void {
    this.transcription?.cancel();
    this.detector?.close();
  }

  private onSpeechStarted(engines: PipelineEngines, event: SpeechStartedEvent): void {
    this.speaking = true;
    this.handlers.onSpeechStarted();
    this.transcription?.cancel();
    const options = { callId: this.context.callId, language: this.config.language, prompt: this.config.stt.prompt };
    this.transcription = TurnTranscription.open(engines.asr, options, this.audio.since(event.audioStartMs), (text) => this.handlers.onStablePartial(text));
  }

  private onTurnEnded(event: TurnEndedEvent): void {
    const endOfTurnMs = this.clock.nowMs();
    const asr = this.transcription;
    this.transcription = undefined;
    this.speaking = false;
    const timing: UserTurnTiming = {
      startMs: this.arrivalOf(event.startMs),
      endOfSpeechMs: this.arrivalOf(event.endMs),
      endOfTurnFrameMs: this.arrivalOf(event.detectedAtMs),
      endOfTurnMs,
      asrFinalMs: null,
    };
    this.context.recorder.event('turn_ended', {
      reason: event.reason,
      endOfSpeechMs: roundOrNull(timing.endOfSpeechMs),
      // When the frame that completed the end-of-turn silence arrived: end-of-turn wait = this - endOfSpeechMs.
      decisionFrameMs: roundOrNull(timing.endOfTurnFrameMs),
      endOfTurnMs: CallClock.round(endOfTurnMs),
    });
    this.handlers.onTurnEnded(event, asr, timing);
  }
}

export function roundOrNull(value: number | null): number | null {
  return value === null ? null : CallClock.round(value);
}
