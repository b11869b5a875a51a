import { CallerAudio, SpeechHysteresis, type VadStream } from '@switchboard/inference';
import { CallClock } from '../call/call-clock';
import { InterruptionDetector } from '../pipeline/interruption-detector';
import type { ConversationRecorder } from '../records/conversation-records';
import { errorPayload } from '../records/event-payloads';

/** Caller audio held while the VAD is being created (about 10 s of 20 ms frames). */
const MAX_FRAMES_BEFORE_VAD = 500;

/** The caller talked over the agent long enough to interrupt it (call-clock ms; null when unknown). */
export interface CallerInterruption {
  speechStartMs: number | null;
  /** When the audio that completed minSpeechMs of speech arrived: the platform's share of a barge-in ends at the clear. */
  decisionFrameMs: number | null;
}

export interface RealtimeInterruptionsOptions {
  /** The call's own VAD stream; when it cannot be had, the model's speech events stand in. */
  createVad(): Promise<VadStream>;
  /** Speech probability threshold (the agent's turn.threshold). */
  threshold: number;
  minSpeechMs: number;
  clock: CallClock;
  recorder: ConversationRecorder;
  onInterruption(speech: CallerInterruption): void;
}

/**
 * Decides when the caller interrupts a realtime agent, by the same rule as the pipeline agent:
 * speech (the platform's own VAD on the caller's audio) that lasts minSpeechMs while the agent is
 * heard. Shorter speech is a backchannel ("uh-huh") and is recorded, not acted on. The model's
 * own VAD cannot make this call: it reports the end of speech only after its silence window,
 * which is longer than minSpeechMs, so every backchannel would look like a barge-in.
 *
 * Should the VAD be unavailable (it failed to load, or failed mid-call) the call goes on: the
 * model's speech_started then interrupts after minSpeechMs unless its speech_stopped came first.
 */
export class RealtimeInterruptions {
  private vad: VadStream | undefined;
  private localVad: 'starting' | 'ready' | 'unavailable' = 'starting';
  /** Audio that arrived while the VAD was being created, with when it arrived. */
  private held: { pcm: Int16Array; atMs: number }[] | undefined = [];
  /** When each caller frame arrived (the model has the audio itself: no samples are kept here). */
  private readonly arrivals = new CallerAudio({ sampleRate: 8000, keepSeconds: 10, keepSamples: false });
  private readonly detector: InterruptionDetector;
  private armed = false;
  private modelSpeech: { startedAtMs: number; timer: NodeJS.Timeout } | undefined;
  private closed = false;

  constructor(private readonly options: RealtimeInterruptionsOptions) {
    const { threshold, minSpeechMs } = options;
    this.detector = new InterruptionDetector(
      { threshold, negativeThreshold: SpeechHysteresis.defaultNegativeThreshold(threshold), minSpeechMs },
      (speech) => options.onInterruption({ speechStartMs: this.arrivalOf(speech.startMs), decisionFrameMs: this.arrivalOf(speech.detectedAtMs) }),
      (speech) => this.recordBackchannel(this.arrivalOf(speech.startMs), this.arrivalOf(speech.endMs), speech.endMs - speech.startMs, 'local_vad'),
    );
    void this.start();
  }

  /** True while the platform's own VAD judges the caller's speech (or is about to). */
  get usesLocalVad(): boolean {
    return this.localVad !== 'unavailable';
  }

  /** Caller audio at 8 kHz, in arrival order. Held audio is copied (the call edge reuses its buffers); the VAD stream copies what it is pushed. */
  push(pcm: Int16Array): void {
    if (this.closed || this.localVad === 'unavailable') return;
    const atMs = this.options.clock.nowMs();
    if (this.localVad === 'ready') this.feed(pcm, atMs);
    else if (this.held && this.held.length < MAX_FRAMES_BEFORE_VAD) this.held.push({ pcm: pcm.slice(), atMs });
  }

  /** Listen for interruptions (the agent's audio is playing) or not. */
  setArmed(armed: boolean): void {
    this.armed = armed;
    this.detector.setArmed(armed);
    if (!armed) this.forgetModelSpeech();
  }

  /** The model's VAD heard the caller start: acted on only when the local VAD is unavailable. */
  modelSpeechStarted(): void {
    if (this.closed || this.usesLocalVad || !this.armed) return;
    this.forgetModelSpeech();
    const startedAtMs = this.options.clock.nowMs();
    const timer = setTimeout(() => {
      this.modelSpeech = undefined;
      this.options.onInterruption({ speechStartMs: startedAtMs, decisionFrameMs: null });
    }, this.options.minSpeechMs);
    this.modelSpeech = { startedAtMs, timer };
  }

  /** The model's VAD heard the caller stop: speech that ended before minSpeechMs was a backchannel. */
  modelSpeechStopped(): void {
    const speech = this.modelSpeech;
    if (!speech) return;
    this.forgetModelSpeech();
    const now = this.options.clock.nowMs();
    this.recordBackchannel(speech.startedAtMs, now, now - speech.startedAtMs, 'model_vad');
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.forgetModelSpeech();
    this.held = undefined;
    this.vad?.close();
  }

  private async start(): Promise<void> {
    let vad: VadStream;
    try {
      vad = await this.options.createVad();
    } catch (error) {
      this.giveUp('create', error);
      return;
    }
    if (this.closed) {
      vad.close();
      return;
    }
    this.vad = vad;
    this.localVad = 'ready';
    // The stream orders its chunks and delivers their frames here one by one.
    vad.listen({
      onFrame: (frame) => {
        if (!this.closed && this.localVad === 'ready') this.detector.onFrame(frame);
      },
      onError: (error) => this.giveUp('push', error),
    });
    const held = this.held ?? [];
    this.held = undefined;
    for (const frame of held) this.feed(frame.pcm, frame.atMs);
  }

  private feed(pcm: Int16Array, atMs: number): void {
    const vad = this.vad!;
    this.arrivals.append(pcm, atMs);
    try {
      vad.push(pcm);
    } catch (error) {
      this.giveUp('push', error);
    }
  }

  /** The VAD cannot be had: the call goes on, judged by the model's speech events. */
  private giveUp(stage: 'create' | 'push', error: unknown): void {
    if (this.closed || this.localVad === 'unavailable') return;
    this.localVad = 'unavailable';
    this.held = undefined;
    this.vad?.close();
    this.vad = undefined;
    this.options.recorder.event('local_vad_unavailable', { stage, ...errorPayload(error) });
  }

  private forgetModelSpeech(): void {
    clearTimeout(this.modelSpeech?.timer);
    this.modelSpeech = undefined;
  }

  private recordBackchannel(startMs: number | null, endMs: number | null, speechMs: number, judgedBy: 'local_vad' | 'model_vad'): void {
    const round = (value: number | null): number | null => (value === null ? null : CallClock.round(value));
    this.options.recorder.event('backchannel_ignored', { startMs: round(startMs), endMs: round(endMs), speechMs: Math.round(speechMs), judgedBy });
  }

  private arrivalOf(streamMs: number): number | null {
    return this.arrivals.arrivalOf(streamMs) ?? null;
  }
}
