/**
 * What the caller has actually heard of the agent's speech, learned from the call's `mark` echoes:
 * The call edge echoes a mark when the audio queued before it has been played, and echoes pending marks
 * as cleared when the buffer is cleared. So "heard" is decided by echoes, never by what was sent.
 *
 * Speech is sent segment by segment (a segment = one synthesised text chunk). A progress mark goes
 * out every `markIntervalMs` of audio inside a segment and one at its end; on barge-in the heard
 * text is every fully played segment plus the share of the current one that its last echoed mark
 * covers, cut at a word boundary (speech runs at a near-constant rate, so audio time maps to text).
 */
export interface PlaybackMarkSink {
  mark(name: string): void;
}

interface SegmentProgress {
  text: string;
  /** Asides (a filler line while a tool runs) are heard but are not part of the model's reply. */
  aside: boolean;
  /** Samples of this segment sent so far / in total (known once ended). */
  sentSamples: number;
  ended: boolean;
  /** Samples covered by the last echoed mark. */
  heardSamples: number;
  fullyHeard: boolean;
}

interface PendingMark {
  segment: SegmentProgress;
  samples: number;
  final: boolean;
}

export class PlaybackTracker {
  private readonly segments: SegmentProgress[] = [];
  private readonly pendingMarks = new Map<string, PendingMark>();
  private readonly markEverySamples: number;
  private samplesSinceMark = 0;
  private markCounter = 0;
  private firstEchoListeners: (() => void)[] = [];
  private drainedListeners: (() => void)[] = [];
  private anyEchoed = false;
  private readonly maxSamples: number;
  private totalSentSamples = 0;
  private limitListeners: (() => void)[] = [];

  constructor(
    private readonly sink: PlaybackMarkSink,
    private readonly sampleRate: number,
    /** Prefix that makes mark names unique per reply (the edge records them). */
    private readonly markPrefix: string,
    markIntervalMs = 250,
    /** The longest this speech may be (the agent's maxReplyMs): audio past it is never sent. */
    maxSpeechMs = Number.POSITIVE_INFINITY,
  ) {
    this.markEverySamples = Math.max(1, Math.round((sampleRate * markIntervalMs) / 1000));
    this.maxSamples = Math.round((sampleRate * maxSpeechMs) / 1000);
  }

  /** The speech reached its longest: nothing more is sent, whatever the engine still makes. */
  get limitReached(): boolean {
    return this.totalSentSamples >= this.maxSamples;
  }

  /** `listener` runs once, in a microtask after the audio that reached the limit was handed over. */
  onLimitReached(listener: () => void): void {
    this.limitListeners.push(listener);
  }

  /** Starts a new segment of speech for `text`; audio for it follows via `audioSent`. */
  beginSegment(text: string, options: { aside?: boolean } = {}): void {
    this.segments.push({ text, aside: options.aside ?? false, sentSamples: 0, ended: false, heardSamples: 0, fullyHeard: false });
    this.samplesSinceMark = 0;
  }

  /** `samples` of the current segment were handed to the output. */
  audioSent(samples: number): void {
    const segment = this.current();
    segment.sentSamples += samples;
    this.totalSentSamples += samples;
    this.samplesSinceMark += samples;
    if (this.samplesSinceMark >= this.markEverySamples) {
      this.samplesSinceMark = 0;
      this.placeMark(segment, false);
    }
  }

  /**
   * Hands `audio` of the current segment to `send` in pieces cut where progress marks fall, placing
   * each mark between its pieces: a mark every markIntervalMs of audio however the engine chunks it
   * (a 600 ms chunk gets marks inside it, not only after it). The edge sends marks on frame
   * boundaries without padding, so cutting a chunk adds nothing to what the caller hears.
   */
  sendAudio<T extends Int16Array | Uint8Array>(audio: T, send: (piece: T) => void): void {
    if (this.limitReached) return;
    const length = Math.min(audio.length, this.maxSamples - this.totalSentSamples);
    for (let offset = 0; offset < length; ) {
      const take = Math.min(length - offset, this.markEverySamples - this.samplesSinceMark);
      send((offset === 0 && take === audio.length ? audio : audio.subarray(offset, offset + take)) as T);
      this.audioSent(take);
      offset += take;
    }
    if (this.limitReached) {
      const listeners = this.limitListeners.splice(0);
      if (listeners.length > 0) queueMicrotask(() => listeners.forEach((listener) => listener()));
    }
  }

  /** The current segment's audio is all sent; the final mark says when it has all been played. */
  endSegment(): void {
    const segment = this.current();
    segment.ended = true;
    this.placeMark(segment, true);
  }

  /** Feed every mark echo here; returns false when the mark is not one of this tracker's. */
  onMarkEchoed(name: string, cleared: boolean): boolean {
    const mark = this.pendingMarks.get(name);
    if (!mark) return false;
    this.pendingMarks.delete(name);
    if (!cleared) {
      mark.segment.heardSamples = Math.max(mark.segment.heardSamples, mark.samples);
      if (mark.final) mark.segment.fullyHeard = true;
      if (!this.anyEchoed) {
        this.anyEchoed = true;
        for (const listener of this.firstEchoListeners.splice(0)) listener();
      }
    }
    if (this.pendingMarks.size === 0 && this.segments.every((segment) => segment.ended)) {
      for (const listener of this.drainedListeners.splice(0)) listener();
    }
    return true;
  }

  /** True while some sent audio has not been confirmed played (or cleared). */
  get playing(): boolean {
    return this.pendingMarks.size > 0 || this.segments.some((segment) => !segment.ended);
  }

  /** Resolves when every mark placed so far has come back (played or cleared). */
  whenDrained(): Promise<void> {
    if (!this.playing) return Promise.resolve();
    return new Promise((resolve) => this.drainedListeners.push(resolve));
  }

  onFirstEcho(listener: () => void): void {
    if (this.anyEchoed) listener();
    else this.firstEchoListeners.push(listener);
  }

  /** True between beginSegment and endSegment. */
  get segmentOpen(): boolean {
    const segment = this.segments.at(-1);
    return segment !== undefined && !segment.ended;
  }

  /** Segments begun so far; pass to `heardTextFrom` to look at one part of the speech. */
  get segmentCount(): number {
    return this.segments.length;
  }

  /** Everything sent, as text (asides included). */
  get sentText(): string {
    return joinSpoken(this.segments.map((segment) => segment.text));
  }

  /** What the caller heard, by the mark echoes so far (asides included). */
  get heardText(): string {
    return this.heardTextFrom(0, { includeAsides: true });
  }

  /** What the caller heard of segments `fromIndex`.., without asides unless asked: what the model said. */
  heardTextFrom(fromIndex: number, options: { includeAsides?: boolean } = {}): string {
    const parts: string[] = [];
    for (const segment of this.segments.slice(fromIndex)) {
      if (segment.aside && !options.includeAsides) {
        if (segment.fullyHeard) continue;
        break;
      }
      if (segment.fullyHeard) {
        parts.push(segment.text);
        continue;
      }
      if (segment.heardSamples > 0 && segment.sentSamples > 0) {
        // The segment's total length is known once it ended; before that, what was sent bounds it.
        parts.push(wordPrefix(segment.text, segment.heardSamples / segment.sentSamples));
      }
      break;
    }
    return joinSpoken(parts);
  }

  /** Everything sent of segments `fromIndex`.., asides left out. */
  sentTextFrom(fromIndex: number): string {
    return joinSpoken(this.segments.slice(fromIndex).filter((segment) => !segment.aside).map((segment) => segment.text));
  }

  /** Seconds of agent audio confirmed played (for the cost ledger's "heard" meter). */
  get heardSeconds(): number {
    let samples = 0;
    for (const segment of this.segments) samples += segment.fullyHeard ? segment.sentSamples : segment.heardSamples;
    return samples / this.sampleRate;
  }

  get sentSeconds(): number {
    return this.segments.reduce((sum, segment) => sum + segment.sentSamples, 0) / this.sampleRate;
  }

  /** Stop waiting for marks (the buffer was cleared or the call ended): drained listeners fire. */
  abandon(): void {
    for (const segment of this.segments) segment.ended = true;
    this.pendingMarks.clear();
    for (const listener of this.drainedListeners.splice(0)) listener();
  }

  private placeMark(segment: SegmentProgress, final: boolean): void {
    this.markCounter += 1;
    const name = `${this.markPrefix}:${this.markCounter}`;
    this.pendingMarks.set(name, { segment, samples: segment.sentSamples, final });
    this.sink.mark(name);
  }

  private current(): SegmentProgress {
    const segment = this.segments.at(-1);
    if (!segment || segment.ended) throw new Error('PlaybackTracker: no open segment (call beginSegment first)');
    return segment;
  }
}

/** The first `fraction` of `text`, rounded down to whole words. */
export function wordPrefix(text: string, fraction: number): string {
  if (fraction >= 1) return text;
  const cut = Math.floor(text.length * Math.max(0, fraction));
  if (cut <= 0) return '';
  if (cut >= text.length) return text;
  // Keep a word only when the cut falls after its end.
  const head = text.slice(0, cut);
  if (/\s/.test(text[cut] ?? ' ')) return head.trimEnd();
  const lastSpace = head.search(/\s\S*$/);
  return lastSpace < 0 ? '' : head.slice(0, lastSpace).trimEnd();
}

function joinSpoken(parts: string[]): string {
  return parts.filter((part) => part.length > 0).join(' ');
}
