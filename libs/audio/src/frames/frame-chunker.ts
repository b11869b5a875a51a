import { AudioError } from '../audio-error';
import { ALAW_SILENCE } from '../codec/alaw';
import { MULAW_SILENCE } from '../codec/mulaw';
import { FRAME_MS, SAMPLE_RATE_TWILIO } from '../audio-constants';

export type FrameArray = Uint8Array | Int16Array;

/**
 * How flush() ends the stream:
 *  - 'pad': complete the last partial frame with `padValue` (codec silence) and emit it, so every
 *    emitted frame has exactly frameLength elements (what Twilio wants: 160-byte mu-law frames).
 *  - 'partial': emit the remainder as a shorter frame, unpadded.
 */
export type FlushMode = 'pad' | 'partial';

export interface FrameChunkerOptions<T extends FrameArray> {
  /** Elements (bytes for Uint8Array, samples for Int16Array) per frame. */
  readonly frameLength: number;
  /** Fill value for flush('pad'): MULAW_SILENCE 0xFF, ALAW_SILENCE 0xD5, 0 for PCM. */
  readonly padValue: number;
  /** Receives each frame. The array is reused: read or copy it before returning. */
  readonly onFrame: (frame: T) => void;
}

/**
 * Cuts a stream of any-sized chunks into exact frames (20 ms by default), for example mu-law from
 * the model side into Twilio's 160-byte frames, or PCM into 20 ms resampler frames.
 *
 * Every frame is assembled in one preallocated array and handed to `onFrame`, which must use it
 * before returning (the next frame overwrites it): nothing is allocated per frame.
 */
export class FrameChunker<T extends FrameArray> {
  readonly frameLength: number;
  readonly padValue: number;
  private readonly frame: T;
  private readonly onFrame: (frame: T) => void;
  private pending = 0;

  /** 20 ms mu-law frames at 8 kHz: 160 bytes, padded with 0xFF. */
  static mulaw(onFrame: (frame: Uint8Array) => void, frameMs = FRAME_MS): FrameChunker<Uint8Array> {
    return new FrameChunker<Uint8Array>(Uint8Array, { frameLength: samplesPerFrame(SAMPLE_RATE_TWILIO, frameMs), padValue: MULAW_SILENCE, onFrame });
  }

  /** 20 ms A-law frames at 8 kHz: 160 bytes, padded with 0xD5. */
  static alaw(onFrame: (frame: Uint8Array) => void, frameMs = FRAME_MS): FrameChunker<Uint8Array> {
    return new FrameChunker<Uint8Array>(Uint8Array, { frameLength: samplesPerFrame(SAMPLE_RATE_TWILIO, frameMs), padValue: ALAW_SILENCE, onFrame });
  }

  /** 16-bit PCM frames of `frameMs` at `sampleRate`, padded with 0. */
  static pcm16(sampleRate: number, onFrame: (frame: Int16Array) => void, frameMs = FRAME_MS): FrameChunker<Int16Array> {
    return new FrameChunker<Int16Array>(Int16Array, { frameLength: samplesPerFrame(sampleRate, frameMs), padValue: 0, onFrame });
  }

  constructor(arrayType: new (length: number) => T, options: FrameChunkerOptions<T>) {
    const { frameLength, padValue, onFrame } = options;
    if (!Number.isInteger(frameLength) || frameLength <= 0) {
      throw new AudioError('invalid_frame_length', `frameLength must be a positive integer, got ${String(frameLength)}`);
    }
    this.frameLength = frameLength;
    this.padValue = padValue;
    this.onFrame = onFrame;
    this.frame = new arrayType(frameLength);
  }

  /** Elements waiting for a full frame. */
  get pendingLength(): number {
    return this.pending;
  }

  /** Emits every frame `chunk` completes; returns how many. */
  push(chunk: T): number {
    let frames = 0;
    let offset = 0;
    const length = chunk.length;
    while (offset < length) {
      const take = Math.min(this.frameLength - this.pending, length - offset);
      // A plain loop rather than set(subarray): subarray would allocate a view per copied run.
      const frame = this.frame;
      const base = this.pending - offset;
      for (let i = offset; i < offset + take; i++) frame[base + i] = chunk[i]!;
      this.pending += take;
      offset += take;
      if (this.pending === this.frameLength) {
        this.pending = 0;
        this.onFrame(this.frame);
        frames++;
      }
    }
    return frames;
  }

  /**
   * Ends the stream (see FlushMode). Returns how many elements of the emitted frame are padding
   * ('pad') or the partial frame's length ('partial'); 0 when nothing was pending.
   */
  flush(mode: FlushMode = 'pad'): number {
    const pending = this.pending;
    if (pending === 0) return 0;
    this.pending = 0;
    if (mode === 'partial') {
      this.onFrame(this.frame.subarray(0, pending) as T);
      return pending;
    }
    this.frame.fill(this.padValue, pending);
    this.onFrame(this.frame);
    return this.frameLength - pending;
  }

  /** Forgets the remainder (for example after a barge-in clears playback); returns its length. */
  discard(): number {
    const dropped = this.pending;
    this.pending = 0;
    return dropped;
  }
}

function samplesPerFrame(sampleRate: number, frameMs: number): number {
  const samples = (sampleRate * frameMs) / 1000;
  if (!Number.isInteger(samples) || samples <= 0) {
    throw new AudioError('invalid_frame_length', `${frameMs} ms at ${sampleRate} Hz is not a whole number of samples`);
  }
  return samples;
}
