/** mu-law encodes zero as 0xFF; padding with it adds silence, not a click. */
export const MULAW_SILENCE_BYTE = 0xff;

/**
 * Cuts an arbitrary stream of mu-law bytes into fixed-size frames, because Twilio wants outbound
 * media in multiples of 160 bytes. Every frame is copied into one preallocated buffer and handed to
 * `emitFrame`, which must use it before returning (it is overwritten by the next frame). The
 * sub-frame remainder waits for more audio, or for flush() (pads with silence) or discard().
 */
export class OutboundAudioFramer {
  private readonly frame: Buffer;
  private pendingBytes = 0;

  constructor(
    readonly frameBytes: number,
    private readonly emitFrame: (frame: Buffer) => void,
  ) {
    if (!Number.isInteger(frameBytes) || frameBytes <= 0) {
      throw new RangeError(`frameBytes must be a positive integer, got ${frameBytes}`);
    }
    this.frame = Buffer.alloc(frameBytes);
  }

  /** Bytes waiting for a full frame. */
  get pendingByteCount(): number {
    return this.pendingBytes;
  }

  /** Emits every full frame `bytes` completes; returns how many frames were emitted. */
  push(bytes: Uint8Array): number {
    // One view per call (not per frame); Buffer.copy then moves bytes without further allocation.
    const source = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    let frames = 0;
    let offset = 0;
    while (offset < source.length) {
      const take = Math.min(this.frameBytes - this.pendingBytes, source.length - offset);
      source.copy(this.frame, this.pendingBytes, offset, offset + take);
      this.pendingBytes += take;
      offset += take;
      if (this.pendingBytes === this.frameBytes) {
        this.pendingBytes = 0;
        this.emitFrame(this.frame);
        frames += 1;
      }
    }
    return frames;
  }

  /** Pads the remainder with silence and emits it; returns the padding byte count (0: nothing pending). */
  flush(): number {
    if (this.pendingBytes === 0) return 0;
    const paddingBytes = this.frameBytes - this.pendingBytes;
    this.frame.fill(MULAW_SILENCE_BYTE, this.pendingBytes);
    this.pendingBytes = 0;
    this.emitFrame(this.frame);
    return paddingBytes;
  }

  /** Forgets the remainder (after a clear it would be stale); returns how many bytes were dropped. */
  discard(): number {
    const dropped = this.pendingBytes;
    this.pendingBytes = 0;
    return dropped;
  }
}
