/** Inner loops for branches with no symmetry to exploit; see folded-fir.ts for the design notes. */

/** General (non-symmetric) taps; passes as in foldedFir, over k < tapCount. */
export function plainFir(
  buf: Float64Array,
  first: number,
  stride: number,
  count: number,
  taps: Float64Array,
  tapCount: number,
  passStart: number,
  passStep: number,
  out: Float64Array,
  outFirst: number,
  outStride: number,
): void {
  const blocked = count & ~3;
  plainFirBlocks(buf, first, stride, blocked, taps, tapCount, passStart, passStep, out, outFirst, outStride);
  if (blocked < count) plainFirSingles(buf, first, stride, blocked, count, taps, tapCount, passStart, passStep, out, outFirst, outStride);
}

function plainFirBlocks(
  buf: Float64Array,
  first: number,
  stride: number,
  count: number,
  taps: Float64Array,
  tapCount: number,
  passStart: number,
  passStep: number,
  out: Float64Array,
  outFirst: number,
  outStride: number,
): void {
  const stride2 = 2 * stride;
  const stride3 = 3 * stride;
  const stride4 = 4 * stride;
  for (let t = 0; t < count; t += 4) {
    const a = first + t * stride;
    let s0 = 0;
    let s1 = 0;
    let s2 = 0;
    let s3 = 0;
    for (let pass = passStart; pass < stride; pass += passStep) {
      // w_r = buf[a + k + r*stride]; one step later w_r is the old w_{r+1}.
      let w0 = buf[a + pass]!;
      let w1 = buf[a + pass + stride]!;
      let w2 = buf[a + pass + stride2]!;
      let k = pass;
      for (; k + stride < tapCount; k += stride2) {
        const c = taps[k]!;
        const w3 = buf[a + k + stride3]!;
        s0 += c * w0;
        s1 += c * w1;
        s2 += c * w2;
        s3 += c * w3;
        const d = taps[k + stride]!;
        const v3 = buf[a + k + stride4]!;
        s0 += d * w1;
        s1 += d * w2;
        s2 += d * w3;
        s3 += d * v3;
        w0 = w2;
        w1 = w3;
        w2 = v3;
      }
      if (k < tapCount) {
        const c = taps[k]!;
        const w3 = buf[a + k + stride3]!;
        s0 += c * w0;
        s1 += c * w1;
        s2 += c * w2;
        s3 += c * w3;
      }
    }
    const o = outFirst + t * outStride;
    out[o] = s0;
    out[o + outStride] = s1;
    out[o + 2 * outStride] = s2;
    out[o + 3 * outStride] = s3;
  }
}

function plainFirSingles(
  buf: Float64Array,
  first: number,
  stride: number,
  from: number,
  count: number,
  taps: Float64Array,
  tapCount: number,
  passStart: number,
  passStep: number,
  out: Float64Array,
  outFirst: number,
  outStride: number,
): void {
  for (let t = from; t < count; t++) {
    const a = first + t * stride;
    let s = 0;
    for (let pass = passStart; pass < stride; pass += passStep) {
      for (let k = pass; k < tapCount; k += stride) s += taps[k]! * buf[a + k]!;
    }
    out[outFirst + t * outStride] = s;
  }
}

/** One output per call, for generic ratios whose branches never repeat within a frame. */
export function dotProduct(buf: Float64Array, first: number, taps: Float64Array, tapOffset: number, tapCount: number): number {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let k = 0;
  for (; k + 4 <= tapCount; k += 4) {
    const j = tapOffset + k;
    const i = first + k;
    s0 += taps[j]! * buf[i]!;
    s1 += taps[j + 1]! * buf[i + 1]!;
    s2 += taps[j + 2]! * buf[i + 2]!;
    s3 += taps[j + 3]! * buf[i + 3]!;
  }
  for (; k < tapCount; k++) s0 += taps[tapOffset + k]! * buf[first + k]!;
  return s0 + s1 + (s2 + s3);
}
