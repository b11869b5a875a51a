import { endianness } from 'node:os';

// Samples are copied byte-for-byte from the wire (little-endian) into Int16Arrays, which use the
// host's byte order: correct on every platform Node ships for (x64, arm64), checked once here.
if (endianness() !== 'LE') throw new Error('PCM16 byte assembly assumes a little-endian host');

/**
 * Turns a raw PCM16 little-endian byte stream, cut anywhere by the network, into whole samples.
 * A chunk with an odd byte count leaves its last byte behind; it becomes the low byte of the first
 * sample of the next chunk.
 */
export class Pcm16ByteAssembler {
  private carry = -1;

  /** The whole samples completed by `bytes` (a new array the caller may keep), possibly empty. */
  push(bytes: Uint8Array): Int16Array {
    if (bytes.length === 0) return new Int16Array(0);
    const carried = this.carry >= 0 ? 1 : 0;
    const total = carried + bytes.length;
    const samples = new Int16Array(total >> 1);
    const out = new Uint8Array(samples.buffer);
    if (samples.length > 0) {
      if (carried === 1) {
        out[0] = this.carry;
        out.set(bytes.subarray(0, out.length - 1), 1);
      } else {
        out.set(bytes.subarray(0, out.length));
      }
    }
    this.carry = (total & 1) === 1 ? bytes[bytes.length - 1]! : -1;
    return samples;
  }

  /** True when the stream ended mid-sample (a truncated body). */
  get hasDanglingByte(): boolean {
    return this.carry >= 0;
  }
}
