/**
 * Collects one utterance's PCM16 as it is pushed in 20 ms frames. The buffer doubles when full,
 * so pushing costs an amortised copy per frame and no allocation in the steady state; callers may
 * reuse the frame they pushed.
 */
export class PcmAccumulator {
  private buffer: Int16Array;
  private length = 0;

  constructor(
    /** Pushing beyond this many samples is refused (the remote API caps the upload size). */
    readonly maxSamples: number,
    initialCapacity = 16_000 * 4,
  ) {
    this.buffer = new Int16Array(Math.min(initialCapacity, maxSamples));
  }

  get sampleCount(): number {
    return this.length;
  }

  /** Appends `samples`; returns false (keeping what was there) when it would exceed maxSamples. */
  push(samples: Int16Array): boolean {
    const needed = this.length + samples.length;
    if (needed > this.maxSamples) return false;
    if (needed > this.buffer.length) {
      const grown = new Int16Array(Math.min(this.maxSamples, Math.max(needed, this.buffer.length * 2)));
      grown.set(this.buffer.subarray(0, this.length));
      this.buffer = grown;
    }
    this.buffer.set(samples, this.length);
    this.length = needed;
    return true;
  }

  /** A view of the samples so far (not a copy: valid until the next push). */
  samples(): Int16Array {
    return this.buffer.subarray(0, this.length);
  }
}
