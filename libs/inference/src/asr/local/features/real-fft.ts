import { MixedRadixFft } from './mixed-radix-fft';

/**
 * FFT of a real signal of even length N through one complex FFT of length N/2 (even samples as
 * the real part, odd samples as the imaginary part), then the standard split: half the work of a
 * complex FFT of the real signal. Returns bins 0..N/2 only (the rest mirror them).
 */
export class RealFft {
  readonly bins: number;
  private readonly half: MixedRadixFft;
  private readonly packedRe: Float64Array;
  private readonly packedIm: Float64Array;
  private readonly zRe: Float64Array;
  private readonly zIm: Float64Array;
  private readonly twiddleRe: Float64Array;
  private readonly twiddleIm: Float64Array;

  constructor(readonly size: number) {
    if (!Number.isInteger(size) || size < 2 || size % 2 !== 0) throw new RangeError(`real FFT size must be a positive even integer, got ${size}`);
    const m = size / 2;
    this.bins = m + 1;
    this.half = new MixedRadixFft(m);
    this.packedRe = new Float64Array(m);
    this.packedIm = new Float64Array(m);
    this.zRe = new Float64Array(m);
    this.zIm = new Float64Array(m);
    this.twiddleRe = Float64Array.from({ length: this.bins }, (_, k) => Math.cos((-2 * Math.PI * k) / size));
    this.twiddleIm = Float64Array.from({ length: this.bins }, (_, k) => Math.sin((-2 * Math.PI * k) / size));
  }

  /** outRe/outIm[k] for k = 0..N/2 of the DFT of the real `input`. */
  transform(input: ArrayLike<number>, outRe: Float64Array, outIm: Float64Array): void {
    const m = this.size / 2;
    if (input.length < this.size || outRe.length < this.bins || outIm.length < this.bins) {
      throw new RangeError(`real FFT needs ${this.size} inputs and room for ${this.bins} bins`);
    }
    const { packedRe, packedIm, zRe, zIm, twiddleRe, twiddleIm } = this;
    for (let n = 0; n < m; n++) {
      packedRe[n] = input[2 * n] as number;
      packedIm[n] = input[2 * n + 1] as number;
    }
    this.half.transform(packedRe, packedIm, zRe, zIm);
    for (let k = 0; k <= m; k++) {
      const a = k % m;
      const b = (m - k) % m;
      // Even-sample spectrum E = (Z[k] + conj Z[m-k]) / 2; odd O = (Z[k] - conj Z[m-k]) / 2i.
      const evenRe = (zRe[a]! + zRe[b]!) / 2;
      const evenIm = (zIm[a]! - zIm[b]!) / 2;
      const oddRe = (zIm[a]! + zIm[b]!) / 2;
      const oddIm = -(zRe[a]! - zRe[b]!) / 2;
      const wr = twiddleRe[k]!;
      const wi = twiddleIm[k]!;
      outRe[k] = evenRe + oddRe * wr - oddIm * wi;
      outIm[k] = evenIm + oddRe * wi + oddIm * wr;
    }
  }
}
