import { foldedFir } from './kernels/folded-fir';
import { passesOf } from './kernels/kernel-passes';
import { mirrorFir, mirrorTapsOf, type MirrorTaps } from './kernels/mirror-fir';
import { dotProduct, plainFir } from './kernels/plain-fir';

/**
 * One rational sample-rate change by L/M with a polyphase FIR, streaming.
 *
 * Model: the input is zero-stuffed to the virtual rate L * inputRate, filtered by the prototype
 * h (odd length N), and every M-th virtual sample is kept, starting `gridOffset` virtual samples
 * after the natural grid. Input sample n sits at virtual position n*L; output m at m*M + gridOffset:
 *
 *     y[m] = sum_n x[n] * h[m*M + gridOffset - n*L]
 *
 * Only the taps that meet real samples are ever multiplied: with v = m*M + gridOffset,
 * i = floor(v / L) and phase p = v mod L, output m is branch p's FIR over x[i], x[i-1], ...
 * (branch p = taps h[p], h[p + L], ...).
 *
 * State: a contiguous Float64Array history (oldest sample first) holding the look-back the
 * branches need in front of the new input, plus the virtual position of the next output. Nothing
 * is allocated per call unless a call brings more input than any call before it.
 *
 * Delay: ((N - 1) / 2 - gridOffset) virtual samples; the planner picks gridOffset so that delays
 * land on whole samples (see resampler-plan.ts).
 */

interface Branch {
  /** Taps in the order they meet the history (oldest sample first), leading/trailing zeros trimmed. */
  readonly taps: Float64Array;
  /** Offset of taps[0] from the oldest sample of the branch's full window. */
  readonly windowOffset: number;
  readonly kind: 'copy' | 'folded' | 'plain' | 'mirror';
  /** For kind 'copy': the single tap's value (1 for interpolators, so copying is exact). */
  readonly copyGain: number;
  /** Passes of the blocked kernels (kernels/kernel-passes.ts) that carry non-zero taps. */
  readonly passStart: number;
  readonly passStep: number;
  /** For kind 'mirror': the shared sum/difference taps, the partner branch, and which output we are. */
  readonly mirror?: MirrorTaps;
  readonly partner?: number;
  readonly isMirrorFirst?: boolean;
}

// Up to this many branches, outputs are computed branch by branch (in blocks, see kernels/);
// beyond it, a branch recurs too rarely within one call and outputs are computed
// one by one from a flat coefficient table.
export const MAX_BLOCKED_BRANCHES = 8;

export interface PolyphaseStageOptions {
  readonly inputRate: number;
  readonly upFactor: number;
  readonly downFactor: number;
  readonly prototype: Float64Array;
  readonly gridOffset: number;
}

export class PolyphaseStage {
  readonly inputRate: number;
  readonly outputRate: number;
  readonly upFactor: number;
  readonly downFactor: number;
  readonly prototype: Float64Array;
  /** Group delay in seconds. */
  readonly delaySeconds: number;

  private readonly gridOffset: number;
  /** Taps per branch (the longest branch); also the history look-back + 1. */
  private readonly branchLength: number;
  private readonly branches: readonly Branch[];
  /** Generic path: branch p's full-length taps at flatTaps[p * branchLength]. */
  private readonly flatTaps: Float64Array;
  private readonly blocked: boolean;
  private readonly lookback: number;

  private history: Float64Array;
  /** Receives the unused half of a mirror pair computed alone (see computeByBranch). */
  private scratch = new Float64Array(0);
  /** Per call, per branch: window start, output count and first output index (-1: none). */
  private readonly branchFirst: Int32Array;
  private readonly branchCount: Int32Array;
  private readonly branchOutput: Int32Array;
  private filled = 0;
  /** Virtual position of the next output relative to history[0]. */
  private nextVirtual = 0;

  constructor(options: PolyphaseStageOptions) {
    const { inputRate, upFactor, downFactor, prototype, gridOffset } = options;
    this.inputRate = inputRate;
    this.upFactor = upFactor;
    this.downFactor = downFactor;
    this.outputRate = (inputRate * upFactor) / downFactor;
    this.prototype = prototype;
    this.gridOffset = gridOffset;
    this.delaySeconds = ((prototype.length - 1) / 2 - gridOffset) / (upFactor * inputRate);
    this.branchLength = Math.ceil(prototype.length / upFactor);
    this.lookback = this.branchLength - 1;
    this.blocked = upFactor <= MAX_BLOCKED_BRANCHES;
    this.flatTaps = flatBranchTaps(prototype, upFactor);
    const branches: Branch[] = [];
    for (let p = 0; p < upFactor; p++) {
      branches.push(makeBranch(this.flatTaps.subarray(p * this.branchLength, (p + 1) * this.branchLength), downFactor));
    }
    this.branches = pairMirrorBranches(branches, downFactor);
    this.branchFirst = new Int32Array(upFactor);
    this.branchCount = new Int32Array(upFactor);
    this.branchOutput = new Int32Array(upFactor).fill(-1);
    this.history = new Float64Array(this.lookback + 1024);
    this.reset();
  }

  reset(): void {
    this.history.fill(0);
    this.filled = this.lookback;
    this.nextVirtual = this.lookback * this.upFactor + this.gridOffset;
  }

  /** Exact number of outputs `process` would return for `inputLength` more samples. */
  outputLengthFor(inputLength: number): number {
    const available = (this.filled + inputLength) * this.upFactor - 1 - this.nextVirtual;
    return available < 0 ? 0 : Math.floor(available / this.downFactor) + 1;
  }

  /**
   * Appends `inputLength` samples of `input` and writes every output they complete to `output`
   * (from index 0). Returns the number written; `output` must hold outputLengthFor(inputLength).
   */
  process(input: Int16Array | Float64Array, inputLength: number, output: Float64Array): number {
    this.append(input, inputLength);
    const count = this.outputLengthFor(0);
    if (count > 0) {
      if (this.blocked) this.computeByBranch(count, output);
      else this.computeOneByOne(count, output);
      this.nextVirtual += count * this.downFactor;
    }
    this.discardConsumed();
    return count;
  }

  private append(input: Int16Array | Float64Array, inputLength: number): void {
    const needed = this.filled + inputLength;
    if (needed > this.history.length) {
      const grown = new Float64Array(needed + (needed >> 1));
      grown.set(this.history.subarray(0, this.filled));
      this.history = grown;
    }
    const history = this.history;
    const base = this.filled;
    // Two loops so each stays monomorphic for the JIT.
    if (input instanceof Int16Array) {
      for (let i = 0; i < inputLength; i++) history[base + i] = input[i]!;
    } else {
      for (let i = 0; i < inputLength; i++) history[base + i] = input[i]!;
    }
    this.filled = needed;
  }

  private computeByBranch(count: number, output: Float64Array): void {
    const L = this.upFactor;
    const M = this.downFactor;
    const history = this.history;
    // Outputs j, j + L, j + 2L, ... share a branch and sit M input samples apart.
    this.branchOutput.fill(-1);
    for (let j = 0; j < L && j < count; j++) {
      const virtual = this.nextVirtual + j * M;
      const newest = Math.floor(virtual / L);
      const phase = virtual - newest * L;
      this.branchOutput[phase] = j;
      this.branchFirst[phase] = newest - this.lookback + this.branches[phase]!.windowOffset;
      this.branchCount[phase] = Math.floor((count - 1 - j) / L) + 1;
    }
    if (this.scratch.length < output.length) this.scratch = new Float64Array(output.length);
    for (let phase = 0; phase < L; phase++) {
      const j = this.branchOutput[phase]!;
      if (j < 0) continue;
      const branch = this.branches[phase]!;
      const first = this.branchFirst[phase]!;
      const branchCount = this.branchCount[phase]!;
      if (branch.kind === 'copy') {
        copyBranch(history, first, M, branchCount, branch.copyGain, output, j, L);
      } else if (branch.kind === 'folded') {
        foldedFir(history, first, M, branchCount, branch.taps, branch.taps.length, branch.passStart, branch.passStep, output, j, L);
      } else if (branch.kind === 'mirror') {
        this.computeMirror(phase, branch, output);
      } else {
        plainFir(history, first, M, branchCount, branch.taps, branch.taps.length, branch.passStart, branch.passStep, output, j, L);
      }
    }
  }

  /** Both halves of a mirror pair in one pass when their windows line up, else this half alone. */
  private computeMirror(phase: number, branch: Branch, output: Float64Array): void {
    const partner = branch.partner!;
    const j = this.branchOutput[phase]!;
    const first = this.branchFirst[phase]!;
    const count = this.branchCount[phase]!;
    const partnerJ = this.branchOutput[partner]!;
    const together = partnerJ >= 0 && this.branchFirst[partner] === first && this.branchCount[partner] === count;
    if (together && !branch.isMirrorFirst) return; // computed with its partner
    const L = this.upFactor;
    const mirror = branch.mirror!;
    if (together) {
      mirrorFir(this.history, first, this.downFactor, count, mirror, output, j, output, partnerJ, L);
    } else if (branch.isMirrorFirst) {
      mirrorFir(this.history, first, this.downFactor, count, mirror, output, j, this.scratch, j, L);
    } else {
      mirrorFir(this.history, first, this.downFactor, count, mirror, this.scratch, j, output, j, L);
    }
  }

  private computeOneByOne(count: number, output: Float64Array): void {
    const L = this.upFactor;
    const M = this.downFactor;
    const B = this.branchLength;
    const history = this.history;
    const taps = this.flatTaps;
    let newest = Math.floor(this.nextVirtual / L);
    let phase = this.nextVirtual - newest * L;
    const newestStep = Math.floor(M / L);
    const phaseStep = M - newestStep * L;
    for (let m = 0; m < count; m++) {
      output[m] = dotProduct(history, newest - this.lookback, taps, phase * B, B);
      newest += newestStep;
      phase += phaseStep;
      if (phase >= L) {
        phase -= L;
        newest += 1;
      }
    }
  }

  /** Moves the look-back the next output needs to the front of the history. */
  private discardConsumed(): void {
    const newest = Math.floor(this.nextVirtual / this.upFactor);
    // Never drop samples that have not arrived yet (a large M can put the next output's window
    // entirely in the future); positions stay consistent because nextVirtual moves with them.
    const drop = Math.min(newest - this.lookback, this.filled);
    if (drop <= 0) return;
    this.history.copyWithin(0, drop, this.filled);
    this.filled -= drop;
    this.nextVirtual -= drop * this.upFactor;
  }
}

/**
 * Every branch's taps in window order (oldest sample first), branch p at [p * B, (p + 1) * B) with
 * B = ceil(N / L): window index j meets x[i - (B - 1) + j] and holds tap h[p + (B - 1 - j) L].
 * Shared with the SIMD stage (simd-chain.ts).
 */
export function flatBranchTaps(prototype: Float64Array, upFactor: number): Float64Array {
  const branchLength = Math.ceil(prototype.length / upFactor);
  const flat = new Float64Array(upFactor * branchLength);
  for (let p = 0; p < upFactor; p++) {
    for (let j = 0; j < branchLength; j++) {
      const index = p + (branchLength - 1 - j) * upFactor;
      flat[p * branchLength + j] = index < prototype.length ? prototype[index]! : 0;
    }
  }
  return flat;
}

/** A branch without its leading and trailing zero taps, and where the rest starts in the window. */
export function trimZeroTaps(full: Float64Array): { taps: Float64Array; windowOffset: number } {
  let start = 0;
  let end = full.length;
  while (start < end && full[start] === 0) start++;
  while (end > start && full[end - 1] === 0) end--;
  return { taps: full.slice(start, end), windowOffset: end > start ? start : 0 };
}

function makeBranch(full: Float64Array, stride: number): Branch {
  const { taps, windowOffset: start } = trimZeroTaps(full);
  if (taps.length === 0) {
    return { taps: new Float64Array(1), windowOffset: 0, kind: 'copy', copyGain: 0, passStart: 0, passStep: 1 };
  }
  if (taps.length === 1) {
    return { taps, windowOffset: start, kind: 'copy', copyGain: taps[0]!, passStart: 0, passStep: 1 };
  }
  let symmetric = taps.length > 1;
  for (let k = 0; k < taps.length >> 1 && symmetric; k++) symmetric = taps[k] === taps[taps.length - 1 - k];
  const kind = symmetric ? 'folded' : 'plain';
  const limit = symmetric ? taps.length >> 1 : taps.length;
  const passes = passesOf(taps, limit, stride);
  return { taps, windowOffset: start, kind, copyGain: 0, passStart: passes.start, passStep: passes.step };
}

/**
 * Marks pairs of plain branches whose taps are exact reverses of each other (the two non-copy
 * branches of a third-band interpolator): they are computed together by mirrorFir.
 */
function pairMirrorBranches(branches: readonly Branch[], stride: number): Branch[] {
  const result = [...branches];
  for (let p = 0; p < result.length; p++) {
    const a = result[p]!;
    if (a.kind !== 'plain') continue;
    for (let q = p + 1; q < result.length; q++) {
      const b = result[q]!;
      if (b.kind !== 'plain' || b.taps.length !== a.taps.length || b.windowOffset !== a.windowOffset) continue;
      const n = a.taps.length;
      let reversed = true;
      for (let k = 0; k < n && reversed; k++) reversed = a.taps[k] === b.taps[n - 1 - k];
      if (!reversed) continue;
      const mirror = mirrorTapsOf(a.taps, (coefficients) => passesOf(coefficients, coefficients.length, stride));
      result[p] = { ...a, kind: 'mirror', mirror, partner: q, isMirrorFirst: true };
      result[q] = { ...b, kind: 'mirror', mirror, partner: p, isMirrorFirst: false };
      break;
    }
  }
  return result;
}

/** The branch of a Nyquist filter that holds only the centre tap: a (scaled) copy of the input. */
function copyBranch(history: Float64Array, first: number, stride: number, count: number, gain: number, output: Float64Array, outFirst: number, outStride: number): void {
  if (gain === 1) {
    for (let t = 0; t < count; t++) output[outFirst + t * outStride] = history[first + t * stride]!;
  } else {
    for (let t = 0; t < count; t++) output[outFirst + t * outStride] = gain * history[first + t * stride]!;
  }
}
