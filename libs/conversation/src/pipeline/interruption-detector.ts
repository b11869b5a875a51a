import { SpeechHysteresis, type VadFrame } from '@switchboard/inference';

/**
 * Decides when caller speech over the agent is a real interruption rather than a backchannel
 * ("uh-huh", "right"): a run of speech (SpeechHysteresis, the very rule turn detection judges
 * speech by: from a chunk >= threshold until one below the negative threshold) that lasts `minSpeechMs`.
 * Fed every VAD frame; fires at most once per run, and only while armed (the agent is speaking).
 * A run heard while armed that ends without firing is reported to `onBackchannel`, when given.
 */
export class InterruptionDetector {
  private runStartMs: number | undefined;
  private firedInRun = false;
  private armed = false;
  /** Armed during a run: the run counts from its next frame (see setArmed). */
  private restartRun = false;
  /** The current run had speech frames while armed: it was speech over the agent. */
  private heardWhileArmed = false;
  private readonly speech: SpeechHysteresis;

  constructor(
    private readonly options: { threshold: number; negativeThreshold: number; minSpeechMs: number },
    private readonly onInterruption: (speech: { startMs: number; detectedAtMs: number }) => void,
    /** Speech over the agent that ended before minSpeechMs ("uh-huh"): `endMs` is where the run ended. */
    private readonly onBackchannel?: (speech: { startMs: number; endMs: number }) => void,
  ) {
    this.speech = new SpeechHysteresis(options);
  }

  /** Listen for interruptions (agent audio is playing) or not. */
  setArmed(armed: boolean): void {
    this.armed = armed;
    // A run that was already going when the agent started counts from the agent's start.
    if (armed) {
      this.firedInRun = false;
      this.restartRun = this.runStartMs !== undefined;
    }
  }

  /** True while the caller is in a run of speech (for deciding whether a pause has begun). */
  get inSpeech(): boolean {
    return this.runStartMs !== undefined;
  }

  /** One VAD frame of the caller's audio, in order. */
  onFrame(frame: VadFrame): void {
    const speaking = this.speech.update(frame.probability);
    if (this.runStartMs === undefined) {
      if (!speaking) return;
      this.runStartMs = frame.startMs;
      this.firedInRun = false;
      this.heardWhileArmed = false;
    } else if (!speaking) {
      const startMs = this.runStartMs;
      this.runStartMs = undefined;
      this.restartRun = false;
      if (this.heardWhileArmed && !this.firedInRun) this.onBackchannel?.({ startMs, endMs: frame.startMs });
      return;
    } else if (this.restartRun) {
      this.runStartMs = frame.startMs;
    }
    this.restartRun = false;
    if (!this.armed || this.firedInRun) return;
    this.heardWhileArmed = true;
    if (frame.endMs - this.runStartMs >= this.options.minSpeechMs) {
      this.firedInRun = true;
      this.onInterruption({ startMs: this.runStartMs, detectedAtMs: frame.endMs });
    }
  }
}
