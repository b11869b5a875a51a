import { decodeMulawSample } from '@switchboard/audio';

/**
 * Quieter than this (linear PCM16, about -48 dBFS) is silence to the simulated caller: the line's
 * own silence frames, an echo of them, and the gaps between an agent's words. Speech and synthetic
 * voices are far louder.
 */
export const AUDIBLE_LEVEL = 128;

const AUDIBLE = new Uint8Array(256).map((_, code) => (Math.abs(decodeMulawSample(code)) >= AUDIBLE_LEVEL ? 1 : 0));

/** The index of the last byte of 8 kHz mu-law `bytes` that can be heard, or -1 when none can. */
export function lastAudibleIndex(bytes: Uint8Array): number {
  for (let index = bytes.length - 1; index >= 0; index--) {
    if (AUDIBLE[bytes[index]!] === 1) return index;
  }
  return -1;
}
