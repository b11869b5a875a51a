/**
 * Turn detection on top of a VAD stream: when the caller starts speaking and when their turn ends.
 *
 * Per 32 ms VAD chunk: speech starts at a chunk >= threshold and is confirmed once it has lasted
 * minSpeechMs without dropping below negativeThreshold (shorter blips are forgotten). In speech, a
 * chunk below negativeThreshold opens a pause; a chunk >= threshold closes it again; anything in
 * between continues whatever is going on (hysteresis, so a wavering probability neither flaps
 * nor ends a turn). A pause of minSilenceMs ends the turn. With an end-of-turn classifier, a pause
 * of eotMinSilenceMs asks it once; a confident answer ends the turn at once.
 */
import { StreamingResampler } from '@switchboard/audio';
import { EngineError } from '../contracts';
import type { VadFrame, VadStream } from '../vad/vad-frame';
import { CallerAudio } from './caller-audio';
import { SpeechHysteresis } from './speech-hysteresis';
import { resolveTurnDetectorOptions, type ResolvedTurnDetectorOptions, type TurnDetectorOptions } from './turn-detector-options';
import type { TurnEndReason, TurnEvent, TurnEventListener } from './turn-events';

type Phase = 'idle' | 'candidate' | 'speaking';

export class TurnDetector {
  private readonly options: ResolvedTurnDetectorOptions;
  /** The call's audio: the agent's own buffer when it shares it, else one of this detector's. */
  private readonly audioBuffer: CallerAudio;
  /** This detector appends what it is pushed (false when the agent appends to its shared buffer). */
  private readonly appendsAudio: boolean;
  private readonly samplesPerMs: number;
  /** Speech or not, chunk by chunk: the same rule the barge-in detectors use. */
  private readonly speech: SpeechHysteresis;
  private readonly listeners = new Set<TurnEventListener>();
  private phase: Phase = 'idle';
  private speechStartMs = 0;
  /** Start of the current pause in speech, if any. */
  private silenceStartMs: number | undefined;
  /** Bumped whenever a pause ends or a turn ends, so a late classifier answer can tell it is stale. */
  private pauseGeneration = 0;
  private classifierAskedInPause = false;
  private lastFrameEndMs = 0;
  private closed = false;

  /**
   * `sharedAudio`: the call's caller-audio buffer, which the agent appends every frame to before it
   * pushes the frame here (the audio is then buffered once per call). Without it the detector keeps
   * its own, long enough for the longest turn.
   */
  constructor(
    private readonly vad: VadStream,
    options: TurnDetectorOptions = {},
    sharedAudio?: CallerAudio,
  ) {
    this.options = resolveTurnDetectorOptions(options);
    this.samplesPerMs = vad.sampleRate / 1000;
    this.speech = new SpeechHysteresis(this.options);
    if (sharedAudio && sharedAudio.sampleRate !== vad.sampleRate) {
      throw new EngineError('turn-detector', 'bad_request', `the shared caller audio is at ${sharedAudio.sampleRate} Hz, the VAD at ${vad.sampleRate} Hz`, false);
    }
    this.appendsAudio = sharedAudio === undefined;
    this.audioBuffer =
      sharedAudio ?? new CallerAudio({ sampleRate: vad.sampleRate, keepSeconds: Math.ceil((this.options.maxTurnMs + this.options.prefixPaddingMs) / 1000) + 1 });
    vad.listen({ onFrame: (frame) => this.closed || this.onFrame(frame) });
  }

  get callId(): string {
    return this.vad.callId;
  }

  onEvent(listener: TurnEventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Feeds 8 kHz audio of any length. Returns at once: the VAD stream runs its complete chunks in
   * order and this detector acts on each frame as it comes (the stream's drained() says when all
   * of it has run). VAD failures go to the stream's owner, which listens to the stream itself.
   */
  push(pcm8k: Int16Array): void {
    if (this.closed) return;
    if (!(pcm8k instanceof Int16Array)) throw new EngineError('turn-detector', 'bad_request', 'turn detection input must be 16-bit PCM in an Int16Array', false);
    // Appended now, in push order, so the audio always runs ahead of the VAD frames (a shared
    // buffer was appended to by the agent before this push).
    if (this.appendsAudio) this.audioBuffer.append(pcm8k);
    this.vad.push(pcm8k);
  }

  /** Resolves once every chunk pushed so far has been run and acted on (tests, benchmarks). */
  drained(): Promise<void> {
    return this.vad.drained();
  }

  close(): void {
    this.closed = true;
    this.pauseGeneration++;
    this.listeners.clear();
    this.vad.close();
  }

  private onFrame(frame: VadFrame): void {
    const { minSpeechMs, minSilenceMs, maxTurnMs } = this.options;
    const speaking = this.speech.update(frame.probability);
    this.lastFrameEndMs = frame.endMs;
    switch (this.phase) {
      case 'idle':
        if (speaking) {
          this.phase = 'candidate';
          this.speechStartMs = frame.startMs;
          this.confirmIfLongEnough(frame, minSpeechMs);
        }
        return;
      case 'candidate':
        if (!speaking) {
          this.phase = 'idle';
          return;
        }
        this.confirmIfLongEnough(frame, minSpeechMs);
        return;
      case 'speaking':
        if (speaking && this.silenceStartMs !== undefined) this.endPause();
        else if (!speaking && this.silenceStartMs === undefined) this.silenceStartMs = frame.startMs;
        if (this.silenceStartMs !== undefined) {
          const silenceMs = frame.endMs - this.silenceStartMs;
          if (silenceMs >= minSilenceMs) return this.endTurn('silence', this.silenceStartMs);
          if (this.options.endOfTurnClassifier && !this.classifierAskedInPause && silenceMs >= this.options.eotMinSilenceMs) this.askClassifier();
        }
        if (frame.endMs - this.speechStartMs >= maxTurnMs) this.endTurn('max_duration', this.silenceStartMs ?? frame.endMs);
        return;
    }
  }

  private confirmIfLongEnough(frame: VadFrame, minSpeechMs: number): void {
    if (frame.endMs - this.speechStartMs < minSpeechMs) return;
    this.phase = 'speaking';
    this.silenceStartMs = undefined;
    const audioStartMs = this.audioStartMs();
    this.emit({ type: 'speech_started', startMs: this.speechStartMs, detectedAtMs: frame.endMs, audioStartMs, audio: this.audio(audioStartMs, frame.endMs) });
  }

  private endPause(): void {
    this.silenceStartMs = undefined;
    this.classifierAskedInPause = false;
    this.pauseGeneration++;
  }

  private endTurn(reason: TurnEndReason, endMs: number, endOfTurnProbability?: number): void {
    const audioStartMs = this.audioStartMs();
    const event: TurnEvent = {
      type: 'turn_ended',
      reason,
      startMs: this.speechStartMs,
      endMs,
      detectedAtMs: this.lastFrameEndMs,
      audioStartMs,
      audio: this.audio(audioStartMs, endMs),
    };
    if (endOfTurnProbability !== undefined) event.endOfTurnProbability = endOfTurnProbability;
    this.phase = 'idle';
    // A turn cut at maxTurnMs may end mid-speech: the next one starts at `threshold` again.
    this.speech.reset();
    this.endPause();
    this.emit(event);
  }

  private askClassifier(): void {
    const classifier = this.options.endOfTurnClassifier!;
    this.classifierAskedInPause = true;
    const generation = this.pauseGeneration;
    const askedAtMs = this.lastFrameEndMs;
    const fromMs = Math.max(this.audioStartMs(), askedAtMs - this.options.eotMaxAudioMs);
    const audio16k = upsampleTo16k(this.audio(fromMs, askedAtMs), this.vad.sampleRate);
    void classifier.probability(audio16k, { callId: this.callId }).then(
      (probability) => {
        // Speech resumed, the turn ended on silence meanwhile, or the detector closed: stale.
        if (this.closed || generation !== this.pauseGeneration || this.phase !== 'speaking') return;
        if (probability >= this.options.eotThreshold) this.endTurn('end_of_turn_model', this.silenceStartMs!, probability);
      },
      (error: unknown) => {
        if (this.closed) return;
        this.emit({ type: 'end_of_turn_model_failed', atMs: askedAtMs, error: error instanceof Error ? error : new Error(String(error)) });
      },
    );
  }

  private audioStartMs(): number {
    return Math.max(0, this.speechStartMs - this.options.prefixPaddingMs);
  }

  private audio(fromMs: number, toMs: number): Int16Array {
    return this.audioBuffer.copy(this.sampleAt(fromMs), this.sampleAt(toMs));
  }

  private sampleAt(ms: number): number {
    return Math.max(0, Math.round(ms * this.samplesPerMs));
  }

  private emit(event: TurnEvent): void {
    for (const listener of this.listeners) listener(event);
  }
}

/** The classifier takes 16 kHz (Smart Turn's rate); the resampler's tail is flushed in. */
function upsampleTo16k(audio: Int16Array, sampleRate: number): Int16Array {
  if (sampleRate === 16000) return audio;
  const resampler = new StreamingResampler({ inputRate: sampleRate, outputRate: 16000 });
  const body = resampler.process(audio);
  const tail = resampler.flush();
  const out = new Int16Array(body.length + tail.length);
  out.set(body);
  out.set(tail, body.length);
  return out;
}
