/**
 * Kaiser-windowed sinc low-pass design (as in speexdsp's resample.c), used where Remez does not fit:
 * interpolators (the window keeps the sinc's exact zeros, so every L-th tap stays zero and one
 * polyphase branch degenerates into a plain copy) and prototypes too long for Remez (22.05k -> 8k
 * has 320 phases, tens of thousands of taps). Frequencies are normalised: cycles per sample.
 */

/** Kaiser's empirical beta for a given stop-band attenuation (dB). */
export function kaiserBeta(attenuationDb: number): number {
  if (attenuationDb > 50) return 0.1102 * (attenuationDb - 8.7);
  if (attenuationDb >= 21) return 0.5842 * Math.pow(attenuationDb - 21, 0.4) + 0.07886 * (attenuationDb - 21);
  return 0;
}

/** Kaiser's length estimate for a transition band `transitionWidth` wide (cycles per sample). */
export function kaiserLength(attenuationDb: number, transitionWidth: number): number {
  return Math.ceil((attenuationDb - 7.95) / (14.357 * transitionWidth)) + 1;
}

/** Zeroth-order modified Bessel function of the first kind (power series; converges fast for beta < 20). */
export function besselI0(x: number): number {
  const quarterSquare = (x * x) / 4;
  let term = 1;
  let sum = 1;
  for (let k = 1; k < 200; k++) {
    term *= quarterSquare / (k * k);
    sum += term;
    if (term < sum * 1e-17) break;
  }
  return sum;
}

export interface WindowedSincOptions {
  readonly numTaps: number;
  /** -6 dB point, cycles per sample at the rate the filter runs at. */
  readonly cutoff: number;
  readonly beta: number;
  /** Sum of the taps (DC gain): 1 for decimators, L for an interpolator by L. */
  readonly dcGain: number;
  /**
   * When set, taps at multiples of this distance from the centre are forced to exactly zero: with
   * cutoff = 1/(2L) the sinc is zero there anyway, and exact zeros let the interpolator skip them.
   */
  readonly nyquistSpacing?: number;
}

export function windowedSinc(options: WindowedSincOptions): Float64Array {
  const { numTaps, cutoff, beta, dcGain, nyquistSpacing } = options;
  const taps = new Float64Array(numTaps);
  const center = (numTaps - 1) / 2;
  const norm = besselI0(beta);
  let sum = 0;
  for (let n = 0; n < numTaps; n++) {
    const offset = n - center;
    const ratio = center === 0 ? 0 : offset / center;
    const window = besselI0(beta * Math.sqrt(Math.max(0, 1 - ratio * ratio))) / norm;
    const arg = 2 * Math.PI * cutoff * offset;
    const sinc = offset === 0 ? 2 * cutoff : Math.sin(arg) / (Math.PI * offset);
    let value = sinc * window;
    if (nyquistSpacing !== undefined && offset !== 0 && Number.isInteger(offset) && offset % nyquistSpacing === 0) value = 0;
    taps[n] = value;
    sum += value;
  }
  if (nyquistSpacing !== undefined && Number.isInteger(center)) {
    // A Nyquist filter's centre tap alone sets the gain of the copy branch: make it exactly dcGain/L
    // so copied samples pass bit-exactly, then the rest of the gain error is at most ~1e-5.
    const scale = dcGain / sum;
    for (let n = 0; n < numTaps; n++) taps[n] = taps[n]! * scale;
    taps[center] = dcGain / nyquistSpacing;
    return taps;
  }
  const scale = dcGain / sum;
  for (let n = 0; n < numTaps; n++) taps[n] = taps[n]! * scale;
  return taps;
}
