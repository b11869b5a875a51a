/**
 * The caller's recent audio with the call-clock time each 20 ms frame arrived, so a position in
 * the audio stream (turn detection speaks in stream milliseconds) maps to "when did we receive
 * it", and the audio from any recent position can be re-read (the recogniser starts at the
 * speech start, which is only known a few frames later).
 */
export class AudioArrivals {
  private readonly samples: Int16Array;
  /** Total samples ever appended; the ring holds the last `samples.length`. */
  private total = 0;
  private readonly frameEnds: number[] = [];
  private readonly frameArrivals: number[] = [];

  constructor(
    private readonly sampleRate: number,
    keepSeconds: number,
  ) {
    this.samples = new Int16Array(sampleRate * keepSeconds);
  }

  get totalSamples(): number {
    return this.total;
  }

  append(pcm: Int16Array, arrivedAtMs: number): void {
    const capacity = this.samples.length;
    for (let i = 0; i < pcm.length; i++) this.samples[(this.total + i) % capacity] = pcm[i]!;
    this.total += pcm.length;
    this.frameEnds.push(this.total);
    this.frameArrivals.push(arrivedAtMs);
    // Arrival times are kept as long as the audio is.
    while (this.frameEnds.length > 0 && this.frameEnds[0]! < this.total - capacity) {
      this.frameEnds.shift();
      this.frameArrivals.shift();
    }
  }

  /** When the frame holding stream position `streamMs` arrived (call clock), or undefined when forgotten/not yet here. */
  arrivalOf(streamMs: number): number | undefined {
    const sample = Math.round((streamMs * this.sampleRate) / 1000);
    for (let i = 0; i < this.frameEnds.length; i++) {
      if (this.frameEnds[i]! >= sample) return this.frameArrivals[i];
    }
    return undefined;
  }

  /** Audio from stream position `fromMs` to everything appended so far (clamped to what is kept). */
  since(fromMs: number): Int16Array {
    const capacity = this.samples.length;
    const from = Math.max(Math.round((fromMs * this.sampleRate) / 1000), this.total - capacity, 0);
    const out = new Int16Array(Math.max(0, this.total - from));
    for (let i = 0; i < out.length; i++) out[i] = this.samples[(from + i) % capacity]!;
    return out;
  }
}
