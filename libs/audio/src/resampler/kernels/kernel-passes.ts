/**
 * Which passes (residues k mod stride, k < limit) carry non-zero taps, as (start, step): every
 * pass -> (0, 1); exactly one -> (it, stride). Anything else visits every pass (zeros cost time,
 * not correctness).
 */
export function passesOf(taps: Float64Array, limit: number, stride: number): { start: number; step: number } {
  const active: number[] = [];
  for (let pass = 0; pass < stride; pass++) {
    for (let k = pass; k < limit; k += stride) {
      if (taps[k] !== 0) {
        active.push(pass);
        break;
      }
    }
  }
  if (active.length === 1 && stride > 1) return { start: active[0]!, step: stride };
  return { start: 0, step: 1 };
}
