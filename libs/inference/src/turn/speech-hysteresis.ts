/**
 * Whether the caller is speaking, from VAD probabilities, with hysteresis: speech begins at a
 * chunk >= `threshold` and ends at a chunk below `negativeThreshold`; anything in between keeps
 * the current state, so a wavering probability neither flaps nor cuts a word in two. The one rule
 * turn detection (TurnDetector) and barge-in detection (the agents' interruption detectors) both
 * judge speech by, so the two can never disagree about whether the caller is talking.
 */
export class SpeechHysteresis {
  private speaking = false;

  /** The negative threshold when none is configured: 0.15 under `threshold` (Silero's own practice). */
  static defaultNegativeThreshold(threshold: number): number {
    return Math.max(0.01, threshold - 0.15);
  }

  constructor(private readonly options: { threshold: number; negativeThreshold: number }) {}

  get inSpeech(): boolean {
    return this.speaking;
  }

  /** Takes the next chunk's probability; returns whether the caller is speaking after it. */
  update(probability: number): boolean {
    if (this.speaking) {
      if (probability < this.options.negativeThreshold) this.speaking = false;
    } else if (probability >= this.options.threshold) {
      this.speaking = true;
    }
    return this.speaking;
  }

  /** Back to silence: what follows must reach `threshold` again to count as speech. */
  reset(): void {
    this.speaking = false;
  }
}
