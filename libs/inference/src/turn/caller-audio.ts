export interface CallerAudioOptions {
  /** Samples per second of what is appended (the VAD's rate: 8 kHz on a phone call). */
  sampleRate: number;
  /** How much recent audio (and arrival times) is kept; older is overwritten. */
  keepSeconds: number;
  /** False: only arrival times are kept (an agent that needs no replay of the audio). Default true. */
  keepSamples?: boolean;
}

/** Arrival bookkeeping is compacted once this many forgotten frames have piled up at the front. */
const COMPACT_AFTER_FRAMES = 1024;

/**
 * The caller's audio of one call, buffered once: the recent samples, addressed by absolute sample
 * index or stream milliseconds (0 = the first sample appended), and the call-clock time each
 * appended frame arrived. The agent appends each frame as it comes; turn detection reads the audio
 * of an utterance and the end-of-turn classifier's window from it, the recogniser re-reads the audio
 * from the start of speech (known only a few frames later), and the waterfalls map a position in
 * the stream to when it arrived. A fixed ring: steady streaming allocates nothing.
 */
export class CallerAudio {
  readonly sampleRate: number;
  private readonly ring: Int16Array | undefined;
  private readonly capacitySamples: number;
  /** Total samples ever appended; the ring holds the last `capacitySamples`. */
  private total = 0;
  private readonly frameEnds: number[] = [];
  private readonly frameArrivals: number[] = [];
  /** Frames before this index are forgotten. */
  private firstFrame = 0;
  /** Stream positions up to this sample belong to forgotten frames. */
  private forgottenThrough = -1;

  constructor(options: CallerAudioOptions) {
    this.sampleRate = options.sampleRate;
    this.capacitySamples = Math.max(1, Math.round(options.sampleRate * options.keepSeconds));
    this.ring = options.keepSamples === false ? undefined : new Int16Array(this.capacitySamples);
  }

  /** Absolute index one past the last sample appended. */
  get totalSamples(): number {
    return this.total;
  }

  /** Appends a frame (copied); `arrivedAtMs` (call clock) lets arrivalOf() map positions to times. */
  append(pcm: Int16Array, arrivedAtMs?: number): void {
    if (this.ring) {
      const capacity = this.capacitySamples;
      // Only the newest `capacity` samples of an oversized append can be kept.
      const source = pcm.length > capacity ? pcm.subarray(pcm.length - capacity) : pcm;
      const skipped = pcm.length - source.length;
      const at = (this.total + skipped) % capacity;
      const first = Math.min(source.length, capacity - at);
      this.ring.set(source.subarray(0, first), at);
      if (first < source.length) this.ring.set(source.subarray(first), 0);
    }
    this.total += pcm.length;
    if (arrivedAtMs === undefined) return;
    this.frameEnds.push(this.total);
    this.frameArrivals.push(arrivedAtMs);
    // Arrival times are kept as long as the audio is.
    while (this.firstFrame < this.frameEnds.length && (this.frameEnds[this.firstFrame] as number) < this.total - this.capacitySamples) {
      this.forgottenThrough = this.frameEnds[this.firstFrame] as number;
      this.firstFrame++;
    }
    if (this.firstFrame >= COMPACT_AFTER_FRAMES) {
      this.frameEnds.splice(0, this.firstFrame);
      this.frameArrivals.splice(0, this.firstFrame);
      this.firstFrame = 0;
    }
  }

  /** When the frame holding stream position `streamMs` arrived (call clock), or undefined when forgotten or not here yet. */
  arrivalOf(streamMs: number): number | undefined {
    const sample = Math.round((streamMs * this.sampleRate) / 1000);
    if (sample <= this.forgottenThrough) return undefined;
    // Binary search: the first kept frame whose end is at or after the sample.
    let low = this.firstFrame;
    let high = this.frameEnds.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((this.frameEnds[middle] as number) >= sample) high = middle;
      else low = middle + 1;
    }
    return low < this.frameEnds.length ? this.frameArrivals[low] : undefined;
  }

  /** A copy of samples [fromSample, toSample), clamped to what is kept. */
  copy(fromSample: number, toSample: number): Int16Array {
    if (!this.ring) return new Int16Array(0);
    const capacity = this.capacitySamples;
    const from = Math.max(fromSample, this.total - capacity, 0);
    const to = Math.min(toSample, this.total);
    if (to <= from) return new Int16Array(0);
    const out = new Int16Array(to - from);
    const start = from % capacity;
    const first = Math.min(out.length, capacity - start);
    out.set(this.ring.subarray(start, start + first));
    if (first < out.length) out.set(this.ring.subarray(0, out.length - first), first);
    return out;
  }

  /** Audio from stream position `fromMs` to everything appended so far (clamped to what is kept). */
  since(fromMs: number): Int16Array {
    return this.copy(Math.round((fromMs * this.sampleRate) / 1000), this.total);
  }
}
