/**
 * Complex FFT for any size whose prime factors are small (Whisper's n_fft = 400 = 4*4*5*5, which a
 * power-of-two FFT cannot do without changing the frequency bins). Stockham autosort: one pass per
 * factor, ping-ponging between two buffers, output in natural order. Twiddles are precomputed per
 * pass and all buffers are preallocated, so a transform allocates nothing.
 */
interface Pass {
  radix: number;
  /** Butterflies per pass: n / radix, for the pass's sub-transform size n. */
  span: number;
  /** Distance between interleaved sub-transforms. */
  stride: number;
  /** W_n^(j*r) for j < span, r = 1..radix-1: [j * (radix - 1) + (r - 1)]. */
  twiddleRe: Float64Array;
  twiddleIm: Float64Array;
}

export class MixedRadixFft {
  private readonly passes: Pass[];
  private readonly re: [Float64Array, Float64Array];
  private readonly im: [Float64Array, Float64Array];
  /** W_p^(q*r) for the generic radices, [q * p + r]. */
  private readonly rootRe = new Map<number, Float64Array>();
  private readonly rootIm = new Map<number, Float64Array>();
  private readonly scratchRe: Float64Array;
  private readonly scratchIm: Float64Array;

  constructor(readonly size: number) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`FFT size must be a positive integer, got ${size}`);
    this.passes = [];
    let n = size;
    let stride = 1;
    for (const radix of factorize(size)) {
      const span = n / radix;
      const twiddleRe = new Float64Array(span * (radix - 1));
      const twiddleIm = new Float64Array(span * (radix - 1));
      for (let j = 0; j < span; j++) {
        for (let r = 1; r < radix; r++) {
          const angle = (-2 * Math.PI * j * r) / n;
          twiddleRe[j * (radix - 1) + r - 1] = Math.cos(angle);
          twiddleIm[j * (radix - 1) + r - 1] = Math.sin(angle);
        }
      }
      this.passes.push({ radix, span, stride, twiddleRe, twiddleIm });
      if (radix !== 2 && radix !== 4 && !this.rootRe.has(radix)) {
        const rootRe = new Float64Array(radix * radix);
        const rootIm = new Float64Array(radix * radix);
        for (let q = 0; q < radix; q++) {
          for (let r = 0; r < radix; r++) {
            rootRe[q * radix + r] = Math.cos((-2 * Math.PI * ((q * r) % radix)) / radix);
            rootIm[q * radix + r] = Math.sin((-2 * Math.PI * ((q * r) % radix)) / radix);
          }
        }
        this.rootRe.set(radix, rootRe);
        this.rootIm.set(radix, rootIm);
      }
      n = span;
      stride *= radix;
    }
    this.re = [new Float64Array(size), new Float64Array(size)];
    this.im = [new Float64Array(size), new Float64Array(size)];
    const largest = Math.max(1, ...this.passes.map((pass) => pass.radix));
    this.scratchRe = new Float64Array(largest);
    this.scratchIm = new Float64Array(largest);
  }

  /** out = DFT(in), X[k] = sum x[n] e^(-2 pi i k n / N). `inIm` null means a real input. */
  transform(inRe: ArrayLike<number>, inIm: ArrayLike<number> | null, outRe: Float64Array, outIm: Float64Array): void {
    const { size } = this;
    if (inRe.length < size || outRe.length < size || outIm.length < size || (inIm && inIm.length < size)) {
      throw new RangeError(`FFT buffers must hold ${size} values`);
    }
    let [sourceRe, targetRe] = this.re;
    let [sourceIm, targetIm] = this.im;
    for (let i = 0; i < size; i++) {
      sourceRe[i] = inRe[i] as number;
      sourceIm[i] = inIm ? (inIm[i] as number) : 0;
    }
    for (const pass of this.passes) {
      this.runPass(pass, sourceRe, sourceIm, targetRe, targetIm);
      [sourceRe, targetRe] = [targetRe, sourceRe];
      [sourceIm, targetIm] = [targetIm, sourceIm];
    }
    outRe.set(sourceRe.subarray(0, size));
    outIm.set(sourceIm.subarray(0, size));
  }

  private runPass(pass: Pass, xr: Float64Array, xi: Float64Array, yr: Float64Array, yi: Float64Array): void {
    const { radix, span, stride, twiddleRe, twiddleIm } = pass;
    const step = span * stride;
    for (let j = 0; j < span; j++) {
      const t = j * (radix - 1);
      for (let k = 0; k < stride; k++) {
        const input = k + stride * j;
        const output = k + stride * radix * j;
        if (radix === 4) {
          const a0r = xr[input]!, a0i = xi[input]!;
          const a1r = xr[input + step]!, a1i = xi[input + step]!;
          const a2r = xr[input + 2 * step]!, a2i = xi[input + 2 * step]!;
          const a3r = xr[input + 3 * step]!, a3i = xi[input + 3 * step]!;
          const t0r = a0r + a2r, t0i = a0i + a2i;
          const t1r = a0r - a2r, t1i = a0i - a2i;
          const t2r = a1r + a3r, t2i = a1i + a3i;
          // (a1 - a3) * -i
          const t3r = a1i - a3i, t3i = a3r - a1r;
          yr[output] = t0r + t2r;
          yi[output] = t0i + t2i;
          this.store(yr, yi, output + stride, t1r + t3r, t1i + t3i, twiddleRe[t]!, twiddleIm[t]!);
          this.store(yr, yi, output + 2 * stride, t0r - t2r, t0i - t2i, twiddleRe[t + 1]!, twiddleIm[t + 1]!);
          this.store(yr, yi, output + 3 * stride, t1r - t3r, t1i - t3i, twiddleRe[t + 2]!, twiddleIm[t + 2]!);
        } else if (radix === 2) {
          const a0r = xr[input]!, a0i = xi[input]!;
          const a1r = xr[input + step]!, a1i = xi[input + step]!;
          yr[output] = a0r + a1r;
          yi[output] = a0i + a1i;
          this.store(yr, yi, output + stride, a0r - a1r, a0i - a1i, twiddleRe[t]!, twiddleIm[t]!);
        } else {
          this.genericButterfly(pass, xr, xi, yr, yi, input, output, t);
        }
      }
    }
  }

  /** A DFT of size `radix` through the root table (radix 3, 5 and any larger prime). */
  private genericButterfly(pass: Pass, xr: Float64Array, xi: Float64Array, yr: Float64Array, yi: Float64Array, input: number, output: number, t: number): void {
    const { radix, span, stride, twiddleRe, twiddleIm } = pass;
    const step = span * stride;
    const rootRe = this.rootRe.get(radix)!;
    const rootIm = this.rootIm.get(radix)!;
    const { scratchRe, scratchIm } = this;
    for (let q = 0; q < radix; q++) {
      scratchRe[q] = xr[input + q * step]!;
      scratchIm[q] = xi[input + q * step]!;
    }
    for (let r = 0; r < radix; r++) {
      let sumRe = 0;
      let sumIm = 0;
      for (let q = 0; q < radix; q++) {
        const wr = rootRe[q * radix + r]!;
        const wi = rootIm[q * radix + r]!;
        sumRe += scratchRe[q]! * wr - scratchIm[q]! * wi;
        sumIm += scratchRe[q]! * wi + scratchIm[q]! * wr;
      }
      if (r === 0) {
        yr[output] = sumRe;
        yi[output] = sumIm;
      } else {
        this.store(yr, yi, output + r * stride, sumRe, sumIm, twiddleRe[t + r - 1]!, twiddleIm[t + r - 1]!);
      }
    }
  }

  private store(yr: Float64Array, yi: Float64Array, index: number, re: number, im: number, wr: number, wi: number): void {
    yr[index] = re * wr - im * wi;
    yi[index] = re * wi + im * wr;
  }
}

/** Radix-4 first (fewest passes), then 2, 3, 5, then any remaining prime. */
function factorize(size: number): number[] {
  const factors: number[] = [];
  let rest = size;
  for (const radix of [4, 2, 3, 5]) {
    while (rest % radix === 0) {
      factors.push(radix);
      rest /= radix;
    }
  }
  for (let prime = 7; rest > 1; prime += 2) {
    while (rest % prime === 0) {
      factors.push(prime);
      rest /= prime;
    }
  }
  return factors;
}
