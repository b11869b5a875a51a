/**
 * The recent audio of one stream, addressed by absolute sample index (0 = the first sample ever
 * pushed). Turn detection keeps only what the current utterance and its prefix padding need and
 * discards the rest. Discarding only moves an offset; the held samples are moved to the front
 * when an append reaches the end, and the buffer grows (doubling) only when an utterance outgrows
 * it, so steady streaming allocates nothing.
 */
export class AudioHistory {
  private buffer: Int16Array;
  /** Where the held samples start in `buffer`, and the absolute index of that sample. */
  private offset = 0;
  private firstSample = 0;
  private length = 0;

  constructor(initialCapacitySamples: number) {
    this.buffer = new Int16Array(Math.max(1, initialCapacitySamples));
  }

  /** Absolute index one past the last sample appended. */
  get endSample(): number {
    return this.firstSample + this.length;
  }

  append(pcm: Int16Array): void {
    if (this.offset + this.length + pcm.length > this.buffer.length) {
      if (this.length + pcm.length > this.buffer.length) {
        const grown = new Int16Array(Math.max(this.buffer.length * 2, this.length + pcm.length));
        grown.set(this.buffer.subarray(this.offset, this.offset + this.length));
        this.buffer = grown;
      } else {
        this.buffer.copyWithin(0, this.offset, this.offset + this.length);
      }
      this.offset = 0;
    }
    this.buffer.set(pcm, this.offset + this.length);
    this.length += pcm.length;
  }

  /** Forgets samples before `sample` (absolute); keeps everything at or after it. */
  discardBefore(sample: number): void {
    const drop = Math.min(this.length, sample - this.firstSample);
    if (drop <= 0) return;
    this.offset += drop;
    this.length -= drop;
    this.firstSample += drop;
  }

  /** A copy of [fromSample, toSample), clamped to what is still held. */
  copy(fromSample: number, toSample: number): Int16Array {
    const start = Math.max(fromSample, this.firstSample) - this.firstSample + this.offset;
    const end = Math.min(toSample, this.endSample) - this.firstSample + this.offset;
    return end > start ? this.buffer.slice(start, end) : new Int16Array(0);
  }
}
