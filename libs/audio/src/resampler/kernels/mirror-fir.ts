/**
 * Two branches whose taps are each other's reverse (the two non-copy branches of a third-band
 * interpolator, for example), computed in one pass. With g the first branch's K taps, for k < K/2
 *
 *     sum[k] = (g[k] + g[K-1-k]) / 2          difference[k] = (g[k] - g[K-1-k]) / 2
 *     S = sum_k sum[k] (x[a+k] + x[a+K-1-k]) + g[mid] x[a+mid] (odd K)
 *     D = sum_k difference[k] (x[a+k] - x[a+K-1-k])
 *     first branch = S + D,   second branch = S - D
 *
 * Half the multiplies and half the loads of two separate passes (measured 1.5x faster for
 * 8k -> 24k). Every output of such a branch is computed this way, paired or not, with the same
 * operations in the same order, so results never depend on how a call's outputs happened to
 * pair up: chunked and one-shot processing stay bit-identical. Design notes: folded-fir.ts.
 */
export interface MirrorTaps {
  readonly sum: Float64Array;
  readonly difference: Float64Array;
  readonly center: number;
  readonly tapCount: number;
  /** Passes (see kernel-passes.ts) with a non-zero sum or difference tap. */
  readonly passStart: number;
  readonly passStep: number;
}

export function mirrorTapsOf(taps: Float64Array, passes: (coefficients: Float64Array) => { start: number; step: number }): MirrorTaps {
  const tapCount = taps.length;
  const half = tapCount >> 1;
  const sum = new Float64Array(half);
  const difference = new Float64Array(half);
  const combined = new Float64Array(half);
  for (let k = 0; k < half; k++) {
    sum[k] = (taps[k]! + taps[tapCount - 1 - k]!) / 2;
    difference[k] = (taps[k]! - taps[tapCount - 1 - k]!) / 2;
    combined[k] = sum[k] !== 0 || difference[k] !== 0 ? 1 : 0;
  }
  const { start, step } = passes(combined);
  return { sum, difference, center: (tapCount & 1) === 1 ? taps[half]! : 0, tapCount, passStart: start, passStep: step };
}

/**
 * Computes `count` outputs of both branches at windows first + t*stride: the first branch's into
 * plus[plusFirst + t*outStride], the second's into minus[minusFirst + t*outStride]. A caller that
 * needs only one branch passes a scratch array for the other.
 */
export function mirrorFir(
  buf: Float64Array,
  first: number,
  stride: number,
  count: number,
  taps: MirrorTaps,
  plus: Float64Array,
  plusFirst: number,
  minus: Float64Array,
  minusFirst: number,
  outStride: number,
): void {
  const blocked = count - (count % 3);
  mirrorFirBlocksOf3(buf, first, stride, blocked, taps, plus, plusFirst, minus, minusFirst, outStride);
  for (let t = blocked; t < count; t++) {
    const a = first + t * stride;
    const e = a + taps.tapCount - 1;
    const half = taps.tapCount >> 1;
    let s = 0;
    let d = 0;
    for (let pass = taps.passStart; pass < stride; pass += taps.passStep) {
      for (let k = pass; k < half; k += stride) {
        const f = buf[a + k]!;
        const b = buf[e - k]!;
        s += taps.sum[k]! * (f + b);
        d += taps.difference[k]! * (f - b);
      }
    }
    s += taps.center * buf[a + half]!;
    plus[plusFirst + t * outStride] = s + d;
    minus[minusFirst + t * outStride] = s - d;
  }
}

/** Three outputs of each branch per iteration (four would exceed the x64 register file). */
function mirrorFirBlocksOf3(
  buf: Float64Array,
  first: number,
  stride: number,
  count: number,
  taps: MirrorTaps,
  plus: Float64Array,
  plusFirst: number,
  minus: Float64Array,
  minusFirst: number,
  outStride: number,
): void {
  const { sum, difference, center, tapCount, passStart, passStep } = taps;
  const half = tapCount >> 1;
  const stride2 = 2 * stride;
  for (let t = 0; t < count; t += 3) {
    const a = first + t * stride;
    const e = a + tapCount - 1;
    let s0 = 0;
    let s1 = 0;
    let s2 = 0;
    let d0 = 0;
    let d1 = 0;
    let d2 = 0;
    for (let pass = passStart; pass < stride; pass += passStep) {
      let f0 = buf[a + pass]!;
      let f1 = buf[a + pass + stride]!;
      let b1 = buf[e - pass + stride]!;
      let b2 = buf[e - pass + stride2]!;
      for (let k = pass; k < half; k += stride) {
        const c = sum[k]!;
        const w = difference[k]!;
        const f2 = buf[a + k + stride2]!;
        const b0 = buf[e - k]!;
        s0 += c * (f0 + b0);
        d0 += w * (f0 - b0);
        s1 += c * (f1 + b1);
        d1 += w * (f1 - b1);
        s2 += c * (f2 + b2);
        d2 += w * (f2 - b2);
        f0 = f1;
        f1 = f2;
        b2 = b1;
        b1 = b0;
      }
    }
    const m = a + half;
    s0 += center * buf[m]!;
    s1 += center * buf[m + stride]!;
    s2 += center * buf[m + stride2]!;
    const p = plusFirst + t * outStride;
    const q = minusFirst + t * outStride;
    plus[p] = s0 + d0;
    minus[q] = s0 - d0;
    plus[p + outStride] = s1 + d1;
    minus[q + outStride] = s1 - d1;
    plus[p + 2 * outStride] = s2 + d2;
    minus[q + 2 * outStride] = s2 - d2;
  }
}
