/**
 * Base64 <-> bytes for media payloads. Decoding writes into a caller-owned buffer so a session can
 * reuse one allocation for every frame of a call.
 */

/**
 * Bytes that `base64` decodes to, or null when its length cannot be base64 (4n+1 chars). Unpadded
 * input is accepted, as Node's decoder does.
 */
export function base64DecodedLength(base64: string): number | null {
  const length = base64.length;
  if (length % 4 === 1) return null;
  let padding = 0;
  if (length > 0 && base64.charCodeAt(length - 1) === 61 /* = */) padding += 1;
  if (length > 1 && base64.charCodeAt(length - 2) === 61) padding += 1;
  return Math.floor((length * 3) / 4) - padding;
}

/**
 * Decodes into `target` and returns the byte count, or null when the text is not clean base64 or
 * `target` is too small. Node's decoder silently skips characters outside the alphabet; every
 * skipped character shortens the output, so comparing the written count with the count implied by
 * the length detects corruption without a second pass over the string.
 */
export function decodeMediaPayloadInto(base64: string, target: Buffer): number | null {
  const expectedBytes = base64DecodedLength(base64);
  if (expectedBytes === null || expectedBytes > target.length) return null;
  if (expectedBytes === 0) return base64.length === 0 ? 0 : null;
  const writtenBytes = target.write(base64, 0, expectedBytes, 'base64');
  return writtenBytes === expectedBytes ? writtenBytes : null;
}

/** Allocating convenience for code off the hot path (tests, tools). Null when not clean base64. */
export function decodeMediaPayload(base64: string): Uint8Array | null {
  const expectedBytes = base64DecodedLength(base64);
  if (expectedBytes === null) return null;
  const target = Buffer.alloc(expectedBytes);
  const writtenBytes = decodeMediaPayloadInto(base64, target);
  return writtenBytes === null ? null : target;
}

/** Base64 of `bytes` without copying them (a Buffer view over the same memory). */
export function encodeMediaPayload(bytes: Uint8Array): string {
  const view = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return view.toString('base64');
}
