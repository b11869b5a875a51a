import { EngineError, type TtsEngine, type TtsResult, type TtsStream } from '@switchboard/inference';
import type { AgentAudioOutput } from '../agent/agent-session';
import type { PlaybackTracker } from '../playback/playback-tracker';

/** Chunks synthesised at once: the one playing and the next, so the next is ready without flooding the TTS. */
const SYNTHESIS_LOOKAHEAD = 2;

interface SpeechJob {
  text: string;
  aside: boolean;
  stream: TtsStream | undefined;
}

export interface SpeechQueueEvents {
  /** First audio of the queue came out of the TTS (before playback). */
  onFirstAudio?(): void;
  /** First audio of the queue was handed to the call. */
  onFirstPlayed?(): void;
  onSynthesized?(result: TtsResult): void;
}

/**
 * Speaks text chunks in order while they are still arriving: each chunk is synthesised as soon as
 * it is queued (up to SYNTHESIS_LOOKAHEAD ahead of playback) and its audio goes to the call as it
 * comes. While `held`, audio is synthesised but not played (speculative replies); `cancel()` stops
 * everything and nothing more is played.
 *
 * Chunks play back to back as one utterance; it ends (output.endOfUtterance: the last partial
 * frame is padded and the marks waiting for it go out) when the queue is finished, cancelled, or
 * has played everything before a pause (a tool round).
 */
export class SpeechQueue {
  private readonly jobs: SpeechJob[] = [];
  private playing: Promise<void> | undefined;
  private ended = false;
  private cancelled = false;
  private failure: EngineError | undefined;
  private released: Promise<void>;
  private release!: () => void;
  private sawFirstAudio = false;
  private playedFirst = false;
  private readonly controller = new AbortController();
  /** Wakes the playback loop when it is waiting for the next chunk. */
  private wakePlayer: (() => void) | undefined;
  /** Audio went to the call since the last end of utterance. */
  private utteranceOpen = false;
  /** pause() was asked: end the utterance once what is queued has been played. */
  private pauseRequested = false;

  constructor(
    private readonly tts: TtsEngine,
    private readonly output: AgentAudioOutput,
    private readonly tracker: PlaybackTracker,
    private readonly options: { callId: string; voice?: string; held?: boolean; events?: SpeechQueueEvents },
  ) {
    this.released = new Promise((resolve) => (this.release = resolve));
    if (!options.held) this.release();
  }

  /** Play from now on (a speculative reply that turned out right). */
  releaseHold(): void {
    this.release();
  }

  get hasPlayed(): boolean {
    return this.playedFirst;
  }

  say(text: string, options: { aside?: boolean } = {}): void {
    // Past the reply's longest nothing more is synthesised: it could never be sent.
    if (this.ended || this.cancelled || this.tracker.limitReached || text.trim().length === 0) return;
    this.jobs.push({ text, aside: options.aside ?? false, stream: undefined });
    this.startSynthesis();
    this.playing ??= this.playAll();
    this.wake();
  }

  /** No more text will come; resolves once every chunk's audio has been handed to the call. Rejects on TTS failure. */
  async finish(): Promise<void> {
    this.ended = true;
    this.playing ??= this.playAll();
    this.wake();
    try {
      await this.playing;
    } finally {
      // Also after a TTS failure: what was sent plays out, and its marks must come back.
      if (!this.cancelled) this.endUtterance();
    }
    if (this.failure) throw this.failure;
  }

  /** No more text for a while (a tool is running): the utterance ends once what is queued has played. */
  pause(): void {
    if (this.ended || this.cancelled) return;
    this.pauseRequested = true;
    this.playing ??= this.playAll();
    this.wake();
  }

  cancel(): void {
    if (this.cancelled) return;
    this.cancelled = true;
    this.controller.abort();
    for (const job of this.jobs) job.stream?.cancel();
    this.jobs.length = 0;
    this.release();
    this.wake();
    // Audio already handed over still plays (after a barge-in's clear there is none): finish it
    // now, before another reply's audio can follow it.
    this.endUtterance();
  }

  private endUtterance(): void {
    if (!this.utteranceOpen) return;
    this.utteranceOpen = false;
    this.output.endOfUtterance();
  }

  /** The reply reached its longest: what is queued or being synthesised will never be sent. */
  private dropUnplayed(): void {
    for (const job of this.jobs) {
      job.stream?.cancel();
      job.stream?.result.catch(() => undefined);
    }
    this.jobs.length = 0;
    this.ended = true;
    // What was sent plays out now: its last frame and final mark need not wait for finish().
    this.endUtterance();
  }

  private wake(): void {
    const wake = this.wakePlayer;
    this.wakePlayer = undefined;
    wake?.();
  }

  private startSynthesis(): void {
    let inFlight = 0;
    for (const job of this.jobs) {
      if (inFlight >= SYNTHESIS_LOOKAHEAD) return;
      job.stream ??= this.tts.synthesize(job.text, { callId: this.options.callId, voice: this.options.voice, signal: this.controller.signal });
      inFlight += 1;
    }
  }

  private async playAll(): Promise<void> {
    for (;;) {
      const job = this.jobs[0];
      if (!job) {
        if (this.ended || this.cancelled) return;
        if (this.pauseRequested) {
          this.pauseRequested = false;
          this.endUtterance();
        }
        // Wait for the next say(), finish() or cancel().
        await new Promise<void>((resolve) => (this.wakePlayer = resolve));
        continue;
      }
      await this.playJob(job);
      if (this.cancelled || this.failure) return;
      if (this.tracker.limitReached) return this.dropUnplayed();
      this.jobs.shift();
      this.startSynthesis();
    }
  }

  private async playJob(job: SpeechJob): Promise<void> {
    const stream = job.stream ?? this.tts.synthesize(job.text, { callId: this.options.callId, voice: this.options.voice, signal: this.controller.signal });
    job.stream = stream;
    let begun = false;
    try {
      for await (const pcm of stream) {
        if (!this.sawFirstAudio) {
          this.sawFirstAudio = true;
          this.options.events?.onFirstAudio?.();
        }
        await this.released;
        if (this.cancelled) return;
        if (!begun) {
          begun = true;
          this.tracker.beginSegment(job.text, { aside: job.aside });
        }
        this.tracker.sendAudio(pcm, (piece) => this.output.play(piece));
        this.utteranceOpen = true;
        if (!this.playedFirst) {
          this.playedFirst = true;
          this.options.events?.onFirstPlayed?.();
        }
        if (this.tracker.limitReached) {
          // The reply is as long as it may be: the rest of this chunk is never heard.
          stream.cancel();
          stream.result.catch(() => undefined);
          this.tracker.endSegment();
          return;
        }
      }
      if (begun && !this.cancelled) this.tracker.endSegment();
      this.options.events?.onSynthesized?.(await stream.result);
    } catch (error) {
      if (begun && !this.cancelled) this.tracker.endSegment();
      if (this.cancelled) return;
      this.failure = error instanceof EngineError ? error : new EngineError(this.tts.name, 'inference_failed', String(error), false, { cause: error });
    }
  }
}
