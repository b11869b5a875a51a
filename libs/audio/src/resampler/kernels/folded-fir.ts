/**
 * The resampler's inner loops; this file: symmetric taps (see also plain-fir.ts, mirror-fir.ts).
 * Every polyphase branch, whatever the ratio, reduces to "evaluate an FIR at `count` positions
 * spaced `stride` input samples apart" on a contiguous Float64Array history (no modulo, no
 * wrap): output t is
 *
 *     out[outFirst + t * outStride] = sum_k taps[k] * buf[first + t * stride + k]
 *
 * Why these shapes (measured with `npm run bench:audio`, V8 scalar code; the notes are the reasons):
 *  - Several (three or four) outputs per iteration: consecutive outputs of one branch read
 *    overlapping windows, so one load feeds several multiply-adds. In V8 every typed-array load
 *    also pays an index computation and a bounds check, so cutting loads (not multiplies) is what
 *    makes these loops fast.
 *  - The window "slides" in registers: the taps are visited in `stride` passes (k = pass, pass +
 *    stride, ...); within a pass output r + 1 needs at step k exactly what output r needs at step
 *    k + stride, so each step loads one new front (and, folded, one new back) sample.
 *  - Folded: symmetric taps (linear phase) let x[k] and x[n-1-k] share one multiply.
 *  - A pass whose taps are all zero is skipped (half-band decimators: every other tap is zero).
 *  - The single-output tail performs the same operations in the same order as the blocked path,
 *    so results do not depend on where a block boundary fell: chunked and one-shot processing give
 *    bit-identical output.
 *  - V8 specifics that measurably matter (a few tens of percent each): no conditional work after
 *    the hot loop in the same function, two steps per iteration with renamed registers, and no
 *    more live values than x64 has registers (hence three outputs where the loop is tight).
 *  - Mirror pairs (mirror-fir.ts): two branches whose taps are each other's reverse share one pass.
 */

/**
 * Symmetric taps (taps[k] === taps[tapCount - 1 - k]). Passes visited: passStart, passStart +
 * passStep, ... < stride (passStep = stride visits one pass: half-band taps, every other one zero).
 */
export function foldedFir(
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
  // Separate functions: with the one-output tail loop in the same function V8 compiled the
  // blocked loop about 1.4x slower (measured; register allocation across the two loops).
  // Stride 1 (interpolator branches): three outputs per iteration, since the four-output,
  // two-step loop runs out of registers there (measured 1.45x faster); larger strides: four.
  let blocked: number;
  if (stride === 1) {
    blocked = count - (count % 3);
    foldedFirBlocksOf3(buf, first, blocked, taps, tapCount, out, outFirst, outStride);
  } else {
    blocked = count & ~3;
    foldedFirBlocksOf4(buf, first, stride, blocked, taps, tapCount, passStart, passStep, out, outFirst, outStride);
  }
  if (blocked < count) foldedFirSingles(buf, first, stride, blocked, count, taps, tapCount, passStart, passStep, out, outFirst, outStride);
}

function foldedFirBlocksOf4(
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
  const half = tapCount >> 1;
  const center = (tapCount & 1) === 1 ? taps[half]! : 0;
  const stride2 = 2 * stride;
  const stride3 = 3 * stride;
  const stride4 = 4 * stride;
  for (let t = 0; t < count; t += 4) {
    const a = first + t * stride;
    const e = a + tapCount - 1;
    let s0 = 0;
    let s1 = 0;
    let s2 = 0;
    let s3 = 0;
    for (let pass = passStart; pass < stride; pass += passStep) {
      // Window of the four outputs at step k: front f_r = buf[a + k + r*stride], back
      // b_r = buf[e - k + r*stride]; one step later f_r is the old f_{r+1} and b_r the old b_{r-1}.
      let f0 = buf[a + pass]!;
      let f1 = buf[a + pass + stride]!;
      let f2 = buf[a + pass + stride2]!;
      let b1 = buf[e - pass + stride]!;
      let b2 = buf[e - pass + stride2]!;
      let b3 = buf[e - pass + stride3]!;
      let k = pass;
      // Two steps per iteration with the registers renamed instead of shifted (~10% faster).
      for (; k + stride < half; k += stride2) {
        const c = taps[k]!;
        const f3 = buf[a + k + stride3]!;
        const b0 = buf[e - k]!;
        s0 += c * (f0 + b0);
        s1 += c * (f1 + b1);
        s2 += c * (f2 + b2);
        s3 += c * (f3 + b3);
        const d = taps[k + stride]!;
        const g3 = buf[a + k + stride4]!;
        const d0 = buf[e - k - stride]!;
        s0 += d * (f1 + d0);
        s1 += d * (f2 + b0);
        s2 += d * (f3 + b1);
        s3 += d * (g3 + b2);
        f0 = f2;
        f1 = f3;
        f2 = g3;
        b3 = b1;
        b2 = b0;
        b1 = d0;
      }
      if (k < half) {
        const c = taps[k]!;
        const f3 = buf[a + k + stride3]!;
        const b0 = buf[e - k]!;
        s0 += c * (f0 + b0);
        s1 += c * (f1 + b1);
        s2 += c * (f2 + b2);
        s3 += c * (f3 + b3);
      }
    }
    const m = a + half;
    const o = outFirst + t * outStride;
    out[o] = s0 + center * buf[m]!;
    out[o + outStride] = s1 + center * buf[m + stride]!;
    out[o + 2 * outStride] = s2 + center * buf[m + stride2]!;
    out[o + 3 * outStride] = s3 + center * buf[m + stride3]!;
  }
}

/** Stride 1, so a single pass; the window slides by one sample per output. */
function foldedFirBlocksOf3(buf: Float64Array, first: number, count: number, taps: Float64Array, tapCount: number, out: Float64Array, outFirst: number, outStride: number): void {
  const half = tapCount >> 1;
  const center = (tapCount & 1) === 1 ? taps[half]! : 0;
  for (let t = 0; t < count; t += 3) {
    const a = first + t;
    const e = a + tapCount - 1;
    let s0 = 0;
    let s1 = 0;
    let s2 = 0;
    let f0 = buf[a]!;
    let f1 = buf[a + 1]!;
    let b1 = buf[e + 1]!;
    let b2 = buf[e + 2]!;
    for (let k = 0; k < half; k++) {
      const c = taps[k]!;
      const f2 = buf[a + k + 2]!;
      const b0 = buf[e - k]!;
      s0 += c * (f0 + b0);
      s1 += c * (f1 + b1);
      s2 += c * (f2 + b2);
      f0 = f1;
      f1 = f2;
      b2 = b1;
      b1 = b0;
    }
    const m = a + half;
    const o = outFirst + t * outStride;
    out[o] = s0 + center * buf[m]!;
    out[o + outStride] = s1 + center * buf[m + 1]!;
    out[o + 2 * outStride] = s2 + center * buf[m + 2]!;
  }
}

function foldedFirSingles(
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
  const half = tapCount >> 1;
  const center = (tapCount & 1) === 1 ? taps[half]! : 0;
  for (let t = from; t < count; t++) {
    const a = first + t * stride;
    const e = a + tapCount - 1;
    let s = 0;
    for (let pass = passStart; pass < stride; pass += passStep) {
      for (let k = pass; k < half; k += stride) s += taps[k]! * (buf[a + k]! + buf[e - k]!);
    }
    out[outFirst + t * outStride] = s + center * buf[a + half]!;
  }
}
