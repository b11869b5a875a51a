/**
 * G.711 mu-law (what Twilio Media Streams carry), table-driven.
 *
 * Both directions are one typed-array lookup per sample: decoding indexes a 256-entry Int16Array,
 * encoding a 64 KiB Uint8Array indexed by the 16-bit sample itself, so no branches or shifts run
 * per sample and callers can pass preallocated output arrays (nothing allocated per frame).
 *
 * The tables are computed once from the reference algorithm below, which follows the classic Sun
 * g711.c arithmetic as `alawmulaw` implements it (bias 0x84 added before clipping at 32635); the
 * unit tests check every one of the 256 codes and 65536 samples against `alawmulaw`.
 */
import { checkedOutput } from './codec-output';

/** mu-law code of 0: pads with silence, not a click. */
export const MULAW_SILENCE = 0xff;

const BIAS = 0x84;
const CLIP = 32635;

/** Reference encoder for one sample; the table below is built from it. */
export function encodeMulawSample(sample: number): number {
  let magnitude = sample;
  const sign = (magnitude >> 8) & 0x80;
  if (sign !== 0) magnitude = -magnitude;
  magnitude += BIAS;
  if (magnitude > CLIP) magnitude = CLIP;
  // Segment = position of the highest set bit above bit 7 (0..7).
  let exponent = 7;
  for (let mask = 0x4000; (magnitude & mask) === 0 && exponent > 0; mask >>= 1) exponent--;
  const mantissa = (magnitude >> (exponent + 3)) & 0x0f;
  return ~(sign | (exponent << 4) | mantissa) & 0xff;
}

/** Reference decoder for one code; the table below is built from it. */
export function decodeMulawSample(code: number): number {
  const inverted = ~code & 0xff;
  const exponent = (inverted >> 4) & 0x07;
  const mantissa = inverted & 0x0f;
  const magnitude = (((mantissa << 3) + BIAS) << exponent) - BIAS;
  return (inverted & 0x80) !== 0 ? -magnitude : magnitude;
}

const DECODE_TABLE = new Int16Array(256);
for (let code = 0; code < 256; code++) DECODE_TABLE[code] = decodeMulawSample(code);

/** Indexed by the sample's 16-bit two's-complement pattern (sample & 0xffff). */
const ENCODE_TABLE = new Uint8Array(65536);
for (let pattern = 0; pattern < 65536; pattern++) ENCODE_TABLE[pattern] = encodeMulawSample((pattern << 16) >> 16);

/**
 * Decodes `src` into `dst` (allocated if omitted; must hold src.length samples) and returns `dst`.
 * Only the first src.length samples of `dst` are written.
 */
export function decodeMulaw(src: Uint8Array, dst?: Int16Array): Int16Array {
  const out = checkedOutput(src.length, dst, Int16Array);
  const n = src.length;
  for (let i = 0; i < n; i++) out[i] = DECODE_TABLE[src[i]!]!;
  return out;
}

/** Encodes `src` into `dst` (allocated if omitted; must hold src.length bytes) and returns `dst`. */
export function encodeMulaw(src: Int16Array, dst?: Uint8Array): Uint8Array {
  const out = checkedOutput(src.length, dst, Uint8Array);
  const n = src.length;
  for (let i = 0; i < n; i++) out[i] = ENCODE_TABLE[src[i]! & 0xffff]!;
  return out;
}
