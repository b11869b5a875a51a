import { AudioError } from '../audio-error';

/** The caller's output array if it is big enough, a new one if none was given. */
export function checkedOutput<T extends Int16Array | Uint8Array>(length: number, dst: T | undefined, create: new (length: number) => T): T {
  if (dst === undefined) return new create(length);
  if (dst.length < length) {
    throw new AudioError('output_too_small', `output holds ${dst.length} samples, ${length} needed`);
  }
  return dst;
}
