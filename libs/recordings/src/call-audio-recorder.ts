/**
 * A call's recording as the caller experienced it, built while the call runs: the caller on the
 * left, the agent on the right, on one timeline: the caller's own media clock.
 *
 * The caller's channel is every frame the caller sent, in order, sample for sample. The agent's
 * channel models the caller's playback buffer (Twilio's, or the browser's, which behave alike):
 * audio sent at time t starts playing at t or where the audio queued before it ends, whichever is
 * later, and a `clear` (barge-in) drops everything not yet played at that moment. So audio that was
 * sent but cut by a barge-in never reaches the file, and the agent's speech sits where the caller
 * heard it relative to their own voice.
 *
 * Where "now" falls on the caller's clock is learnt from the caller's frames: a frame ending at
 * media time m (the samples before it plus its own) cannot arrive before m, so each arrival bounds
 * the clock's origin, and the earliest bound (the least delayed frame, as NTP picks the fastest
 * exchange) is kept. Network and event-loop delays then shift nothing on the recording.
 *
 * Memory stays bounded whatever the call's length: samples are written out (interleaved, or mixed
 * to mono) once they are certainly final, i.e. up to the caller audio received and no later than
 * now (agent audio before "now" has played; after it, a clear may still cut it). What is held is
 * the agent's audio queued ahead of the caller's ear (at most one reply) and the caller audio not
 * yet written (under `flushEveryMs`).
 *
 * Pure apart from the injected clock, so every rule is tested without timers.
 */
export type RecordingChannels = 'dual' | 'mono';

export interface CallAudioRecorderOptions {
  /** Both channels at this rate (8000 for phone calls, 16000 for browser calls). */
  sampleRate: number;
  channels: RecordingChannels;
  /** Receives the recording in time order: interleaved caller/agent pairs (dual) or mixed samples (mono). Must copy what it keeps. */
  write(samples: Int16Array): void;
  /** Monotonic milliseconds (performance.now in production). */
  now(): number;
  /** A first estimate of the timeline's origin on that clock (when the caller's first frame arrived); refined by every frame. */
  originMs: number;
  /** Samples are handed to `write` in blocks of about this long (fewer, larger writes). Default 1000 ms. */
  flushEveryMs?: number;
}

/** A growable run of samples starting at a timeline position, appended at the end and consumed from the front. */
class SampleQueue {
  private buffer: Int16Array;
  private head = 0;
  private tail = 0;

  constructor(initialCapacity: number) {
    this.buffer = new Int16Array(Math.max(16, initialCapacity));
  }

  get length(): number {
    return this.tail - this.head;
  }

  append(samples: Int16Array): void {
    this.reserve(samples.length);
    this.buffer.set(samples, this.tail);
    this.tail += samples.length;
  }

  appendSilence(count: number): void {
    if (count <= 0) return;
    this.reserve(count);
    this.buffer.fill(0, this.tail, this.tail + count);
    this.tail += count;
  }

  /** Keeps only the first `count` samples (the rest were never played). */
  truncate(count: number): void {
    this.tail = this.head + Math.max(0, Math.min(count, this.length));
  }

  /** The first `count` samples (a view, valid until the next append). */
  peek(count: number): Int16Array {
    return this.buffer.subarray(this.head, this.head + count);
  }

  drop(count: number): void {
    this.head += Math.min(count, this.length);
    if (this.head === this.tail) this.head = this.tail = 0;
  }

  private reserve(extra: number): void {
    if (this.tail + extra <= this.buffer.length) return;
    const live = this.length;
    if (live + extra <= this.buffer.length / 2) {
      // Mostly consumed: slide the live part to the front instead of growing.
      this.buffer.copyWithin(0, this.head, this.tail);
    } else {
      const grown = new Int16Array(Math.max(this.buffer.length * 2, live + extra));
      grown.set(this.buffer.subarray(this.head, this.tail));
      this.buffer = grown;
    }
    this.head = 0;
    this.tail = live;
  }
}

export class CallAudioRecorder {
  /** Samples written out so far (the timeline position of the first held sample). */
  private writtenSamples = 0;
  /** Caller samples received beyond `writtenSamples`. */
  private readonly caller: SampleQueue;
  /** Agent samples from `writtenSamples` to where the queued playback ends (silence where nothing played). */
  private readonly agent: SampleQueue;
  private readonly flushEverySamples: number;
  private out: Int16Array;
  private finished = false;
  /** The caller's media time 0 on the `now()` clock: the smallest (arrival - media time) seen. */
  private originMs: number;

  constructor(private readonly options: CallAudioRecorderOptions) {
    if (!Number.isInteger(options.sampleRate) || options.sampleRate <= 0) throw new RangeError(`sampleRate must be a positive integer, got ${options.sampleRate}`);
    this.flushEverySamples = Math.max(1, Math.round(((options.flushEveryMs ?? 1000) * options.sampleRate) / 1000));
    this.caller = new SampleQueue(this.flushEverySamples * 2);
    this.agent = new SampleQueue(this.flushEverySamples * 2);
    this.out = new Int16Array(this.flushEverySamples * 2 * this.channelCount);
    this.originMs = options.originMs;
  }

  get channelCount(): number {
    return this.options.channels === 'dual' ? 2 : 1;
  }

  get sampleRate(): number {
    return this.options.sampleRate;
  }

  /** Samples per channel written so far. */
  get samplesWritten(): number {
    return this.writtenSamples;
  }

  /** One frame the caller sent, at the recording's rate, in arrival order. */
  callerAudio(pcm: Int16Array): void {
    if (this.finished) return;
    this.caller.append(pcm);
    const mediaEndMs = ((this.writtenSamples + this.caller.length) * 1000) / this.options.sampleRate;
    this.originMs = Math.min(this.originMs, this.options.now() - mediaEndMs);
    if (this.caller.length >= this.flushEverySamples) this.writeUpTo(Math.min(this.writtenSamples + this.caller.length, this.nowSamples()));
  }

  /** Agent audio that was just sent to the caller (whole frames, padding included). */
  agentAudioSent(pcm: Int16Array): void {
    if (this.finished || pcm.length === 0) return;
    const queuedEnd = this.writtenSamples + this.agent.length;
    // Playback starts now, unless earlier audio is still queued: then right after it.
    this.agent.appendSilence(this.nowSamples() - queuedEnd);
    this.agent.append(pcm);
  }

  /** The caller's playback buffer was cleared (barge-in): nothing queued after this moment was heard. */
  agentCleared(): void {
    if (this.finished) return;
    this.agent.truncate(this.nowSamples() - this.writtenSamples);
  }

  /**
   * The call is over: the caller's audio is written whole, the agent's up to now (what was still
   * queued at hang-up was never played). Idempotent.
   */
  finish(): void {
    if (this.finished) return;
    this.agentCleared();
    this.finished = true;
    const end = this.writtenSamples + Math.max(this.caller.length, this.agent.length);
    this.writeUpTo(end);
  }

  private nowSamples(): number {
    return Math.floor(((this.options.now() - this.originMs) * this.options.sampleRate) / 1000);
  }

  /** Writes every sample before timeline position `end` (caller and agent beyond what they hold are silence). */
  private writeUpTo(end: number): void {
    while (this.writtenSamples < end) {
      const count = Math.min(end - this.writtenSamples, this.flushEverySamples * 2);
      const callerCount = Math.min(count, this.caller.length);
      const agentCount = Math.min(count, this.agent.length);
      const callerSamples = this.caller.peek(callerCount);
      const agentSamples = this.agent.peek(agentCount);
      const block = this.out.subarray(0, count * this.channelCount);
      if (this.channelCount === 2) {
        for (let i = 0; i < count; i++) {
          block[2 * i] = i < callerCount ? callerSamples[i]! : 0;
          block[2 * i + 1] = i < agentCount ? agentSamples[i]! : 0;
        }
      } else {
        for (let i = 0; i < count; i++) {
          const mixed = (i < callerCount ? callerSamples[i]! : 0) + (i < agentCount ? agentSamples[i]! : 0);
          block[i] = mixed > 32767 ? 32767 : mixed < -32768 ? -32768 : mixed;
        }
      }
      this.options.write(block);
      this.caller.drop(callerCount);
      this.agent.drop(agentCount);
      this.writtenSamples += count;
    }
  }
}
