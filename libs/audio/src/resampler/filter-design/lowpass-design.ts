import { kaiserBeta, kaiserLength, windowedSinc } from './kaiser';
import { measureBands } from './frequency-response';
import { remez } from './remez';

/**
 * The three low-pass shapes the resampler needs, each returning an odd-length symmetric filter
 * (odd length puts the group delay on a whole sample of the rate the filter runs at, which the
 * stage padding in polyphase-stage.ts relies on). All frequencies here are in Hz at `sampleRate`.
 */
export interface LowpassSpec {
  /** The rate the prototype runs at (for a polyphase stage: L times its input rate). */
  readonly sampleRate: number;
  readonly passEdgeHz: number;
  readonly stopEdgeHz: number;
  readonly stopbandAttenuationDb: number;
  readonly passbandRippleDb: number;
  /** Sum of taps: 1 for decimation, L for interpolation by L (zero-stuffing loses that gain). */
  readonly dcGain: number;
}

export interface DesignedFilter {
  readonly taps: Float64Array;
  readonly method: 'remez' | 'remez-half-band' | 'kaiser' | 'kaiser-nyquist';
}

// Remez is exact but O(taps^2) per iteration; past this length (generic ratios with hundreds of
// polyphase branches) the Kaiser design is used instead.
const REMEZ_MAX_TAPS = 401;
// Kaiser's length formula is approximate; we verify and lengthen. Skip verification for huge
// prototypes (the sweep tests cover those end to end).
const VERIFY_MAX_TAPS = 1200;

/** Equiripple (Parks-McClellan) design, shortest odd length meeting both ripple targets. */
export function designEquiripple(spec: LowpassSpec): DesignedFilter | null {
  const fs = spec.sampleRate;
  const passDeviation = Math.pow(10, spec.passbandRippleDb / 20) - 1;
  const stopDeviation = Math.pow(10, -spec.stopbandAttenuationDb / 20);
  const transition = (spec.stopEdgeHz - spec.passEdgeHz) / fs;
  // Herrmann-style estimate, started a little low because Remez lands slightly under it.
  const estimate = (-10 * Math.log10(passDeviation * stopDeviation) - 13) / (14.6 * transition) + 1;
  let numTaps = Math.max(5, Math.floor(estimate * 0.9)) | 1;
  if (numTaps > REMEZ_MAX_TAPS) return null;
  const bands = [
    { startFrequency: 0, endFrequency: spec.passEdgeHz / fs, gain: 1, weight: 1 },
    { startFrequency: spec.stopEdgeHz / fs, endFrequency: 0.5, gain: 0, weight: passDeviation / stopDeviation },
  ];
  for (; numTaps <= REMEZ_MAX_TAPS; numTaps += 2) {
    const result = remez(numTaps, bands);
    // Remez is equiripple on its grid; the true extrema between grid points are a little higher,
    // so the length is accepted only once a finer scan confirms both targets.
    if (result.deviation <= passDeviation && meetsSpec(result.taps, spec, 1)) {
      const taps = result.taps;
      if (spec.dcGain !== 1) for (let i = 0; i < taps.length; i++) taps[i] = taps[i]! * spec.dcGain;
      return { taps, method: 'remez' };
    }
  }
  return null;
}

/** Kaiser-windowed sinc with the cutoff in the middle of the transition band. */
export function designKaiser(spec: LowpassSpec): DesignedFilter {
  const fs = spec.sampleRate;
  const transition = (spec.stopEdgeHz - spec.passEdgeHz) / fs;
  const cutoff = (spec.passEdgeHz + spec.stopEdgeHz) / 2 / fs;
  return { taps: kaiserMeetingSpec(spec, transition, cutoff, undefined), method: 'kaiser' };
}

/**
 * Nyquist (L-band) filter for interpolation by L: cutoff exactly at the input Nyquist frequency, so
 * every L-th tap from the centre is zero and one polyphase branch is a plain copy of the input.
 * The transition is symmetric around the input Nyquist frequency, which is exactly what "images of
 * tones up to passEdge are rejected" needs: the image of passEdge sits at inputRate - passEdge.
 */
export function designNyquist(spec: LowpassSpec, factor: number): DesignedFilter {
  const fs = spec.sampleRate;
  const transition = (spec.stopEdgeHz - spec.passEdgeHz) / fs;
  return { taps: kaiserMeetingSpec(spec, transition, 1 / (2 * factor), factor), method: 'kaiser-nyquist' };
}

/**
 * Equiripple half-band filter (Nyquist filter for a factor of 2), by the classic trick: design G,
 * an even-length (type II) filter approximating 1 on [0, 2 * passEdge], with Remez; then
 * H(z) = (1 + G(z^2) z^-1 ... ) / 2, i.e. h[2k] = g[k] / 2 and the centre tap 1/2. G's forced zero
 * at half its Nyquist frequency mirrors into H's stop band, so H is flat to passEdge, rejects from
 * fs/2 - passEdge, and every other tap is exactly zero. About 10% shorter than the Kaiser design.
 * `spec.stopEdgeHz` must be sampleRate/2 - passEdgeHz (the transition of a half-band filter is
 * symmetric about sampleRate/4).
 */
export function designHalfBand(spec: LowpassSpec): DesignedFilter {
  const passDeviation = Math.min(Math.pow(10, spec.passbandRippleDb / 20) - 1, Math.pow(10, -spec.stopbandAttenuationDb / 20));
  const band = [{ startFrequency: 0, endFrequency: (2 * spec.passEdgeHz) / spec.sampleRate, gain: 1, weight: 1 }];
  for (let halfLength = 4; ; halfLength++) {
    const result = remez(2 * halfLength, band);
    // H's ripple (both bands) is half of G's.
    if (result.deviation / 2 <= passDeviation || halfLength > REMEZ_MAX_TAPS / 4) {
      const taps = new Float64Array(4 * halfLength - 1);
      for (let k = 0; k < 2 * halfLength; k++) taps[2 * k] = (result.taps[k]! * spec.dcGain) / 2;
      taps[2 * halfLength - 1] = spec.dcGain / 2;
      return { taps, method: 'remez-half-band' };
    }
  }
}

function kaiserMeetingSpec(spec: LowpassSpec, transition: number, cutoff: number, nyquistSpacing: number | undefined): Float64Array {
  // Kaiser's ripple is the same in both bands, so the stop-band target dominates.
  const attenuation = spec.stopbandAttenuationDb + 1;
  const beta = kaiserBeta(attenuation);
  let numTaps = kaiserLength(attenuation, transition) | 1;
  if (nyquistSpacing !== undefined) numTaps = nyquistLength(numTaps, nyquistSpacing);
  for (;;) {
    const taps = windowedSinc({ numTaps, cutoff, beta, dcGain: spec.dcGain, nyquistSpacing });
    if (numTaps > VERIFY_MAX_TAPS) return taps;
    if (meetsSpec(taps, spec, spec.dcGain)) return taps;
    numTaps = nyquistSpacing === undefined ? numTaps + 2 : nyquistLength(numTaps + 2, nyquistSpacing);
  }
}

function meetsSpec(taps: Float64Array, spec: LowpassSpec, gain: number): boolean {
  const figures = measureBands(taps, gain, spec.passEdgeHz / spec.sampleRate, spec.stopEdgeHz / spec.sampleRate, 1500);
  return figures.stopbandAttenuationDb >= spec.stopbandAttenuationDb && figures.passbandRippleDb <= spec.passbandRippleDb;
}

/** Smallest length >= numTaps of the form 2*L*j - 1: longer ones would only add zero end taps. */
function nyquistLength(numTaps: number, factor: number): number {
  const j = Math.ceil((numTaps + 1) / (2 * factor));
  return 2 * factor * j - 1;
}
