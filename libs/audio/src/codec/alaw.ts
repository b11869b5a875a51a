/**
 * G.711 A-law, table-driven like mulaw.ts (see there for why), bit-exact with `alawmulaw`:
 * encoding treats -32768 as -32767 and clips magnitudes at 32635, as that library does.
 */
import { checkedOutput } from './codec-output';

/** A-law has no exact zero; 0xD5 decodes to +8, the quietest code (ITU-T G.711 idle pattern). */
export const ALAW_SILENCE = 0xd5;

const CLIP = 32635;

/** Reference encoder for one sample; the table below is built from it. */
export function encodeAlawSample(sample: number): number {
  let magnitude = sample === -32768 ? -32767 : sample;
  // A-law's sign bit is 1 for positive values (before the 0x55 toggle of even bits).
  const sign = (~magnitude >> 8) & 0x80;
  if (sign === 0) magnitude = -magnitude;
  if (magnitude > CLIP) magnitude = CLIP;
  let companded: number;
  if (magnitude >= 256) {
    let exponent = 7;
    for (let mask = 0x4000; (magnitude & mask) === 0; mask >>= 1) exponent--;
    companded = (exponent << 4) | ((magnitude >> (exponent + 3)) & 0x0f);
  } else {
    companded = magnitude >> 4;
  }
  return (companded ^ (sign ^ 0x55)) & 0xff;
}

/** Reference decoder for one code; the table below is built from it. */
export function decodeAlawSample(code: number): number {
  const toggled = (code ^ 0x55) & 0xff;
  const segment = (toggled & 0x70) >> 4;
  const mantissa = toggled & 0x0f;
  // Reconstruct the middle of the quantisation interval (hence the extra half-step bit).
  const magnitude = segment === 0 ? (mantissa << 4) + 8 : ((mantissa << 4) + 0x108) << (segment - 1);
  return (toggled & 0x80) !== 0 ? magnitude : -magnitude;
}

const DECODE_TABLE = new Int16Array(256);
for (let code = 0; code < 256; code++) DECODE_TABLE[code] = decodeAlawSample(code);

const ENCODE_TABLE = new Uint8Array(65536);
for (let pattern = 0; pattern < 65536; pattern++) ENCODE_TABLE[pattern] = encodeAlawSample((pattern << 16) >> 16);

/** Decodes `src` into `dst` (allocated if omitted; must hold src.length samples) and returns `dst`. */
export function decodeAlaw(src: Uint8Array, dst?: Int16Array): Int16Array {
  const out = checkedOutput(src.length, dst, Int16Array);
  const n = src.length;
  for (let i = 0; i < n; i++) out[i] = DECODE_TABLE[src[i]!]!;
  return out;
}

/** Encodes `src` into `dst` (allocated if omitted; must hold src.length bytes) and returns `dst`. */
export function encodeAlaw(src: Int16Array, dst?: Uint8Array): Uint8Array {
  const out = checkedOutput(src.length, dst, Uint8Array);
  const n = src.length;
  for (let i = 0; i < n; i++) out[i] = ENCODE_TABLE[src[i]! & 0xffff]!;
  return out;
}
