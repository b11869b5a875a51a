import { PacedSender, PacedTick, TimerScheduler } from './paced-sender';
import { MULAW_SILENCE } from '@switchboard/audio';
import { lastAudibleIndex } from './audible-mulaw';

/** Twilio sends 20 ms frames: 160 mu-law bytes at 8 kHz. */
export const FRAME_DURATION_MS = 20;
export const FRAME_BYTES = 160;

export interface DtmfPress {
  /** 0-9, *, #, A-D. */
  digit: string;
  /** When to press it, in ms from the start of the utterance it belongs to. */
  atMs: number;
}

export interface UtteranceOptions {
  /** Silence sent after the audio before the utterance counts as done (lets the agent answer). */
  trailingSilenceMs?: number;
  dtmf?: readonly DtmfPress[];
}

export interface UtteranceTiming {
  /** False when the line stopped (hang-up, socket closed) before the utterance was fully sent. */
  completed: boolean;
  startedAtMs: number | null;
  /** When the frame carrying the last audio byte was sent; null for an utterance with no audio. */
  speechEndedAtMs: number | null;
  /** When the frame carrying the last byte that can be heard was sent (audio may end in silence); null when none can. */
  audibleEndedAtMs: number | null;
  endedAtMs: number | null;
}

/** Where the line's frames go; `payload` is a view that is only valid during the call. */
export interface InboundFrameSink {
  sendMedia(payload: Uint8Array, tick: PacedTick): void;
  sendDtmf(digit: string): void;
  /** An utterance's last speech frame went out (used for reply latency). */
  onSpeechEnded?(atMs: number): void;
}

interface Utterance {
  audio: Uint8Array;
  audioFrames: number;
  /** The frame holding the last audible byte, -1 when none. */
  lastAudibleFrame: number;
  totalFrames: number;
  dtmfByFrame: Map<number, string[]>;
  nextFrame: number;
  timing: UtteranceTiming;
  resolve: (timing: UtteranceTiming) => void;
}

const DTMF_DIGIT = /^[0-9*#A-D]$/;

/**
 * The caller's side of the phone line: like Twilio, it carries audio continuously from `start`
 * until hang-up, silence included, in real-time paced 20 ms frames. Utterances queue up and are
 * sent in order; between them the line sends silence (or nothing, with `idleSilence: false`, for
 * tests that want a quiet socket).
 */
export class InboundLine {
  private readonly pacer: PacedSender;
  private readonly queue: Utterance[] = [];
  // Preallocated so that sending a frame allocates nothing here.
  private readonly paddedFrame = new Uint8Array(FRAME_BYTES);
  private readonly silenceFrame = new Uint8Array(FRAME_BYTES).fill(MULAW_SILENCE);
  private readonly idleSilence: boolean;
  private stopped = false;

  constructor(
    private readonly sink: InboundFrameSink,
    options: { idleSilence?: boolean; scheduler?: TimerScheduler; onError?: (error: unknown) => void } = {},
  ) {
    this.idleSilence = options.idleSilence ?? true;
    this.pacer = new PacedSender({
      intervalMs: FRAME_DURATION_MS,
      ...(options.scheduler ? { scheduler: options.scheduler } : {}),
      ...(options.onError ? { onError: options.onError } : {}),
    });
  }

  get maxLateMs(): number {
    return this.pacer.maxLateMs;
  }

  start(startMs?: number): void {
    this.pacer.start(this.onTick, startMs);
  }

  /** Stops sending; utterances still queued settle with `completed: false`. */
  stop(): void {
    this.stopped = true;
    this.pacer.stop();
    for (const utterance of this.queue.splice(0)) utterance.resolve(utterance.timing);
  }

  /** Queues mu-law audio; resolves when its audio and trailing silence have been sent. */
  enqueue(audio: Uint8Array, options: UtteranceOptions = {}): Promise<UtteranceTiming> {
    const trailingSilenceMs = options.trailingSilenceMs ?? 0;
    if (!(trailingSilenceMs >= 0)) throw new RangeError(`trailingSilenceMs must be >= 0, got ${trailingSilenceMs}`);
    const audioFrames = Math.ceil(audio.length / FRAME_BYTES);
    let totalFrames = audioFrames + Math.ceil(trailingSilenceMs / FRAME_DURATION_MS);
    const dtmfByFrame = new Map<number, string[]>();
    for (const press of options.dtmf ?? []) {
      if (!DTMF_DIGIT.test(press.digit)) throw new RangeError(`Not a DTMF digit: "${press.digit}"`);
      if (!(press.atMs >= 0)) throw new RangeError(`DTMF atMs must be >= 0, got ${press.atMs}`);
      const frame = Math.floor(press.atMs / FRAME_DURATION_MS);
      dtmfByFrame.set(frame, [...(dtmfByFrame.get(frame) ?? []), press.digit]);
      // A press scheduled after the audio keeps the utterance open until it has been sent.
      totalFrames = Math.max(totalFrames, frame + 1);
    }
    return new Promise((resolve) => {
      const timing: UtteranceTiming = { completed: false, startedAtMs: null, speechEndedAtMs: null, audibleEndedAtMs: null, endedAtMs: null };
      const lastAudibleFrame = Math.floor(lastAudibleIndex(audio) / FRAME_BYTES);
      const utterance: Utterance = { audio, audioFrames, lastAudibleFrame, totalFrames, dtmfByFrame, nextFrame: 0, timing, resolve };
      if (totalFrames === 0 || this.stopped) {
        timing.completed = !this.stopped;
        resolve(timing);
        return;
      }
      this.queue.push(utterance);
    });
  }

  private readonly onTick = (tick: PacedTick): void => {
    const utterance = this.queue[0];
    if (!utterance) {
      if (this.idleSilence) this.sink.sendMedia(this.silenceFrame, tick);
      return;
    }
    const frame = utterance.nextFrame;
    const sentAtMs = tick.deadlineMs + tick.lateMs;
    if (frame === 0) utterance.timing.startedAtMs = sentAtMs;
    // Twilio reports a key press between media frames; send it before the frame it falls in.
    for (const digit of utterance.dtmfByFrame.get(frame) ?? []) this.sink.sendDtmf(digit);
    this.sink.sendMedia(this.frameOf(utterance, frame), tick);
    if (frame === utterance.lastAudibleFrame) utterance.timing.audibleEndedAtMs = sentAtMs;
    if (frame === utterance.audioFrames - 1) {
      utterance.timing.speechEndedAtMs = sentAtMs;
      this.sink.onSpeechEnded?.(sentAtMs);
    }
    utterance.nextFrame += 1;
    if (utterance.nextFrame >= utterance.totalFrames) {
      this.queue.shift();
      utterance.timing.completed = true;
      utterance.timing.endedAtMs = sentAtMs;
      utterance.resolve(utterance.timing);
    }
  };

  private frameOf(utterance: Utterance, frame: number): Uint8Array {
    if (frame >= utterance.audioFrames) return this.silenceFrame;
    const offset = frame * FRAME_BYTES;
    const end = offset + FRAME_BYTES;
    if (end <= utterance.audio.length) return utterance.audio.subarray(offset, end);
    // The last frame of audio that is not a multiple of 160 bytes is padded with silence.
    this.paddedFrame.fill(MULAW_SILENCE);
    this.paddedFrame.set(utterance.audio.subarray(offset));
    return this.paddedFrame;
  }
}
