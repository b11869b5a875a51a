// Decodes inbound media payloads into one reused buffer, so a steady stream allocates nothing per frame.
import { base64DecodedLength, decodeMediaPayloadInto } from '../messages/media-payload';

/** Grows on demand; 1 KiB covers Twilio's usual 160-byte frames with room to spare. */
const INITIAL_PAYLOAD_CAPACITY_BYTES = 1024;

/** The first `length` bytes of `buffer` as a Uint8Array over the same memory (not a Buffer: see `view`). */
function plainView(buffer: Buffer, length: number): Uint8Array {
  return new Uint8Array(buffer.buffer, buffer.byteOffset, length);
}

export class InboundPayloadBuffer {
  private buffer = Buffer.alloc(INITIAL_PAYLOAD_CAPACITY_BYTES);
  // Reused while frames keep the same size, so a steady stream allocates no view per frame. A plain
  // Uint8Array, never a Buffer: Buffer#slice() returns a view, so a handler that "copies" a frame
  // with slice() would keep a window onto this reused buffer and see every later frame through it.
  private view: Uint8Array = plainView(this.buffer, 0);

  /**
   * The bytes of a base64 media payload, or null when it is not valid base64. The returned view is
   * overwritten by the next decode: a handler that keeps a frame must copy it.
   */
  decode(payload: string): Uint8Array | null {
    const neededBytes = base64DecodedLength(payload);
    if (neededBytes !== null && neededBytes > this.buffer.length) {
      this.buffer = Buffer.alloc(Math.max(neededBytes, this.buffer.length * 2));
      this.view = plainView(this.buffer, 0);
    }
    const decodedBytes = decodeMediaPayloadInto(payload, this.buffer);
    if (decodedBytes === null) return null;
    if (this.view.length !== decodedBytes) this.view = plainView(this.buffer, decodedBytes);
    return this.view;
  }
}
