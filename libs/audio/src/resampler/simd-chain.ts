import { firSimdHeap, type FirSimdHeap } from './kernels/fir-simd-runtime';
import { flatBranchTaps, MAX_BLOCKED_BRANCHES, trimZeroTaps } from './polyphase-stage';
import type { StagePlan } from './resampler-plan';
import type { StageChain } from './typescript-chain';

/**
 * The stage chain on the WebAssembly SIMD kernel (kernels/fir-simd.wat), float32. Same model,
 * positions and output counts as PolyphaseStage (polyphase-stage.ts; read its header first); only
 * where samples live and which loops run differ.
 *
 * Per process() call, everything happens in the shared scratch memory (kernels/fir-simd-runtime.ts):
 *
 *   [hist 0 | input 0 | 4 zeros] [hist 1 | input 1 = output 0 | 4 zeros] ... [output | 4 zeros] [Int16]
 *
 * The Int16 input is copied in and widened to float32 by the kernel; each stage copies its
 * look-back (kept in a small Float32Array between calls) in front of its input and writes its
 * outputs straight into the next stage's input; the last outputs are rounded to Int16 by the
 * kernel and copied out. Per call, JavaScript only copies the input, the look-backs (about 100
 * samples a stage) and the output; every multiply runs in the kernel, one call per branch
 * (blocked stages, L <= 8: four outputs share each tap load) or one per stage (L > 8).
 *
 * Which kernel per stage kind: measured with `npm run bench:audio` (20 ms frames, ns per frame,
 * this path vs the TypeScript one), SIMD wins for every kind, so 'auto' uses it for whole chains:
 *   2:1 decimator (16k -> 8k)                1574 vs 6251
 *   half-band + 2/3 (24k -> 8k)              2732 vs 10263
 *   L > 8 one by one, then 2:1 (22.05k -> 8k) 4564 vs 18097
 *   half-band interpolator (8k -> 16k)       1187 vs 3486 (its copy branch: a one-tap row)
 *   third-band interpolator (8k -> 24k)      2004 vs 7617 (no mirror pairing needed)
 */

/** Where one stage's taps live in the kernel's memory (written once per filter design). */
interface SimdTaps {
  /** Blocked stages: per branch, its trimmed taps (byte address), v128 count and window offset. */
  readonly branchTaps: Int32Array;
  readonly branchVecs: Int32Array;
  readonly windowOffset: Int32Array;
  /** Other stages: every branch's full-length row (byte address of row 0), rowVecs v128s each. */
  readonly rows: number;
  readonly rowVecs: number;
}

// Keyed by prototype: a planned prototype belongs to one stage shape (L), and plans are cached.
const tapCache = new WeakMap<Float64Array, SimdTaps>();

function simdTapsOf(heap: FirSimdHeap, prototype: Float64Array, upFactor: number): SimdTaps {
  const cached = tapCache.get(prototype);
  if (cached) return cached;
  const flat = flatBranchTaps(prototype, upFactor);
  const branchLength = flat.length / upFactor;
  const blocked = upFactor <= MAX_BLOCKED_BRANCHES;
  const branchTaps = new Int32Array(upFactor);
  const branchVecs = new Int32Array(upFactor);
  const windowOffset = new Int32Array(upFactor);
  const rowVecs = Math.ceil(branchLength / 4);
  let rows = 0;
  if (blocked) {
    // Zero taps trimmed: a Nyquist filter's copy branch becomes one tap (one v128 per output).
    for (let p = 0; p < upFactor; p++) {
      const { taps, windowOffset: offset } = trimZeroTaps(flat.subarray(p * branchLength, (p + 1) * branchLength));
      const padded = new Float32Array(Math.max(1, Math.ceil(taps.length / 4)) * 4);
      padded.set(taps);
      branchTaps[p] = heap.addTable(padded);
      branchVecs[p] = padded.length / 4;
      windowOffset[p] = offset;
    }
  } else {
    const table = new Float32Array(upFactor * rowVecs * 4);
    for (let p = 0; p < upFactor; p++) table.set(flat.subarray(p * branchLength, (p + 1) * branchLength), p * rowVecs * 4);
    rows = heap.addTable(table);
  }
  const taps: SimdTaps = { branchTaps, branchVecs, windowOffset, rows, rowVecs };
  tapCache.set(prototype, taps);
  return taps;
}

/** One L/M stage; its samples are in the heap only during run(). */
class SimdStage {
  readonly delaySeconds: number;
  readonly lookback: number;
  private readonly upFactor: number;
  private readonly downFactor: number;
  private readonly gridOffset: number;
  private readonly blocked: boolean;
  private readonly taps: SimdTaps;
  /** The last `kept` samples (right-aligned; at most lookback of them) carried to the next call. */
  private readonly history: Float32Array;
  private kept = 0;
  /** Virtual position of the next output relative to the first kept sample. */
  private nextVirtual = 0;

  constructor(heap: FirSimdHeap, plan: StagePlan) {
    const { upFactor, downFactor, gridOffset, filter } = plan;
    this.upFactor = upFactor;
    this.downFactor = downFactor;
    this.gridOffset = gridOffset;
    this.delaySeconds = ((filter.taps.length - 1) / 2 - gridOffset) / (upFactor * plan.inputRate);
    this.lookback = Math.ceil(filter.taps.length / upFactor) - 1;
    this.blocked = upFactor <= MAX_BLOCKED_BRANCHES;
    this.taps = simdTapsOf(heap, filter.taps, upFactor);
    this.history = new Float32Array(this.lookback);
    this.reset();
  }

  reset(): void {
    this.history.fill(0);
    this.kept = this.lookback;
    this.nextVirtual = this.lookback * this.upFactor + this.gridOffset;
  }

  outputLengthFor(inputLength: number): number {
    const available = (this.kept + inputLength) * this.upFactor - 1 - this.nextVirtual;
    return available < 0 ? 0 : Math.floor(available / this.downFactor) + 1;
  }

  /**
   * Filters `length` samples at float index `input` (with `lookback` free floats before them and
   * 4 after) and writes its outputs at float index `output`; returns their count.
   */
  run(heap: FirSimdHeap, input: number, length: number, output: number): number {
    const f32 = heap.f32;
    const L = this.upFactor;
    f32.set(this.history, input - this.lookback);
    for (let i = 0; i < 4; i++) f32[input + length + i] = 0;
    const first = input - this.kept; // float index of the oldest kept sample
    const count = this.outputLengthFor(length);
    if (count > 0) {
      if (this.blocked) this.runBranches(heap, first, count, output);
      else this.runPolyphase(heap, first, count, output);
      this.nextVirtual += count * this.downFactor;
    }
    // As PolyphaseStage.discardConsumed: keep the next output's look-back, never future samples.
    const filled = this.kept + length;
    const drop = Math.min(Math.floor(this.nextVirtual / L) - this.lookback, filled);
    const keep = filled - drop;
    const history = this.history;
    const to = this.lookback - keep;
    const from = first + drop;
    for (let i = 0; i < keep; i++) history[to + i] = f32[from + i]!;
    this.kept = keep;
    this.nextVirtual -= drop * L;
    return count;
  }

  /** Outputs j, j + L, j + 2L, ... share branch phase(j) and sit M input samples apart. */
  private runBranches(heap: FirSimdHeap, first: number, count: number, output: number): void {
    const L = this.upFactor;
    const M = this.downFactor;
    const { branchTaps, branchVecs, windowOffset } = this.taps;
    for (let j = 0; j < L && j < count; j++) {
      const virtual = this.nextVirtual + j * M;
      const newest = Math.floor(virtual / L);
      const phase = virtual - newest * L;
      const window = first + newest - this.lookback + windowOffset[phase]!;
      const branchCount = Math.floor((count - 1 - j) / L) + 1;
      heap.kernel.firStrided(window * 4, M * 4, branchCount, branchTaps[phase]!, branchVecs[phase]!, (output + j) * 4, L * 4);
    }
  }

  private runPolyphase(heap: FirSimdHeap, first: number, count: number, output: number): void {
    const L = this.upFactor;
    const M = this.downFactor;
    const newest = Math.floor(this.nextVirtual / L);
    const phase = this.nextVirtual - newest * L;
    const newestStep = Math.floor(M / L);
    const { rows, rowVecs } = this.taps;
    heap.kernel.firPolyphase((first + newest - this.lookback) * 4, rows, rowVecs * 16, rowVecs, count, phase, M - newestStep * L, newestStep * 4, L, output * 4);
  }
}

export class SimdChain implements StageChain {
  readonly delaySeconds: number;
  private readonly heap: FirSimdHeap;
  private readonly stages: readonly SimdStage[];
  /** Per call: samples into each stage, then the chain's output count. */
  private readonly lengths: Int32Array;
  private result: Int16Array = new Int16Array(0);

  /** Throws if this runtime has no WebAssembly SIMD (check firSimdSupported() first). */
  constructor(plans: readonly StagePlan[]) {
    const heap = firSimdHeap();
    if (heap === null) throw new Error('WebAssembly SIMD is not available in this runtime');
    this.heap = heap;
    this.stages = plans.map((plan) => new SimdStage(heap, plan));
    this.delaySeconds = this.stages.reduce((sum, stage) => sum + stage.delaySeconds, 0);
    this.lengths = new Int32Array(this.stages.length + 1);
  }

  outputLengthFor(inputLength: number): number {
    let length = inputLength;
    for (const stage of this.stages) length = stage.outputLengthFor(length);
    return length;
  }

  process(input: Int16Array, output: Int16Array): number {
    const heap = this.heap;
    const stages = this.stages;
    const lengths = this.lengths;
    // Lay the call out (see the header), in floats from the start of scratch; each region 4-aligned.
    let floats = 0;
    lengths[0] = input.length;
    for (let s = 0; s < stages.length; s++) {
      floats += align4(stages[s]!.lookback) + align4(lengths[s]!) + 4;
      lengths[s + 1] = stages[s]!.outputLengthFor(lengths[s]!);
    }
    const count = lengths[stages.length]!;
    const finalAt = floats;
    floats += align4(count) + 4;
    const int16Bytes = 2 * align4(Math.max(input.length, count)) + 16;
    heap.reserveScratch(floats * 4 + int16Bytes);
    const kernel = heap.kernel;
    const base = heap.scratch >> 2;
    const int16At = heap.scratch + floats * 4;

    heap.i16.set(input, int16At >> 1);
    let at = base + align4(stages[0]!.lookback);
    kernel.i16ToF32(int16At, at * 4, input.length);
    for (let s = 0; s < stages.length; s++) {
      const next = s + 1 < stages.length ? at + align4(lengths[s]!) + 4 + align4(stages[s + 1]!.lookback) : base + finalAt;
      stages[s]!.run(heap, at, lengths[s]!, next);
      at = next;
    }
    kernel.f32ToI16(at * 4, int16At, count);
    output.set(this.resultView(heap.i16, int16At, count));
    return count;
  }

  /**
   * A view of the Int16 result, kept while its place and length repeat (steady frames), so the
   * copy out is one memcpy with no allocation (an element loop over WASM memory measured ~10x slower).
   */
  private resultView(i16: Int16Array, byteOffset: number, count: number): Int16Array {
    const view = this.result;
    if (view.buffer === i16.buffer && view.byteOffset === byteOffset && view.length === count) return view;
    this.result = i16.subarray(byteOffset >> 1, (byteOffset >> 1) + count);
    return this.result;
  }

  reset(): void {
    for (const stage of this.stages) stage.reset();
  }
}

function align4(n: number): number {
  return (n + 3) & ~3;
}
