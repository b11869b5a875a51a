import { AudioError } from '../audio-error';
import { MAX_BLOCKED_BRANCHES } from './polyphase-stage';
import { designEquiripple, designHalfBand, designKaiser, designNyquist, type DesignedFilter, type LowpassSpec } from './filter-design/lowpass-design';

export type ResamplerQuality = 'telephony' | 'high';

export interface QualityTargets {
  /** Pass band edge as a fraction of the lower of the two Nyquist frequencies. */
  readonly passbandFraction: number;
  readonly stopbandAttenuationDb: number;
  readonly passbandRippleDb: number;
}

/**
 * 'telephony' is the spec with margin: >= 80 dB required, 83 dB designed (what speex
 * quality 4 measures), flat to 0.85 of Nyquist (3.4 kHz at 8 kHz) within +-0.025 dB so that an
 * 8k -> 16k -> 8k round trip keeps well over 30 dB SNR. 'high' is for offline/wideband use.
 */
export const QUALITY_TARGETS: Readonly<Record<ResamplerQuality, QualityTargets>> = {
  telephony: { passbandFraction: 0.85, stopbandAttenuationDb: 83, passbandRippleDb: 0.025 },
  high: { passbandFraction: 0.9, stopbandAttenuationDb: 100, passbandRippleDb: 0.01 },
};

export interface StagePlan {
  readonly inputRate: number;
  readonly outputRate: number;
  readonly upFactor: number;
  readonly downFactor: number;
  readonly filter: DesignedFilter;
  /** The spec the prototype was designed to, at the virtual rate upFactor * inputRate. */
  readonly spec: LowpassSpec;
  readonly gridOffset: number;
}

// Delay alignment (below) may add up to this much delay to land on whole input samples as well.
const MAX_ALIGNMENT_PADDING_SECONDS = 0.001;
// Half-band pre-decimation only pays off while its transition band stays wide.
const MIN_HALF_BAND_RATIO = 2.5;
const MAX_BRANCHES = 2048;

const planCache = new Map<string, readonly StagePlan[]>();

/**
 * Splits inputRate -> outputRate into stages and designs their filters (cached: every call of a
 * given ratio shares the coefficient tables).
 *
 * Downsampling by more than 2.5x first halves the rate with half-band filters while the rate stays
 * above 2.5x the output: their transition band only has to protect the final output band, so it is
 * wide and the filter short, and half of its taps are zero. The remaining L/M step carries the
 * sharp filter at the lowest possible rate (24k -> 8k = 24k -> 12k half-band + 12k -> 8k at 2/3,
 * about half the multiplies of a direct 3:1 filter).
 *
 * When that last step would need many polyphase branches (22.05k -> 8k: 320/441), its outputs
 * cannot be computed in blocks (see kernels/); then the chain instead goes to exactly twice the
 * output rate with a cheap wide-transition filter (everything it lets through above the output
 * band is removed next) and leaves the sharp filter to a 2:1 decimator, the fastest kernel:
 * 22.05k -> 16k (14 taps per output) -> 8k (101 taps, folded).
 */
export function planStages(inputRate: number, outputRate: number, quality: ResamplerQuality): readonly StagePlan[] {
  const key = `${inputRate}:${outputRate}:${quality}`;
  const cached = planCache.get(key);
  if (cached) return cached;
  const plan = buildPlan(inputRate, outputRate, QUALITY_TARGETS[quality]);
  planCache.set(key, plan);
  return plan;
}

function buildPlan(inputRate: number, outputRate: number, targets: QualityTargets): StagePlan[] {
  if (inputRate === outputRate) return [];
  const chain = new ChainBuilder(inputRate, outputRate, targets);
  if (outputRate > inputRate) {
    chain.addRational(outputRate);
    return chain.stages;
  }
  let halfBands = 0;
  for (let rate = inputRate; rate % 2 === 0 && rate >= MIN_HALF_BAND_RATIO * outputRate; rate /= 2) halfBands++;
  let viaDoubleOutput = false;
  if (branchesFor(inputRate / 2 ** halfBands, outputRate) > MAX_BLOCKED_BRANCHES) {
    // Keep the half-bands above twice the output rate only, then take the detour described above.
    while (halfBands > 0 && inputRate / 2 ** halfBands <= 2 * outputRate) halfBands--;
    viaDoubleOutput = inputRate / 2 ** halfBands > 2 * outputRate;
  }
  for (let i = 0; i < halfBands; i++) chain.addHalfBand();
  if (viaDoubleOutput) chain.addRational(2 * outputRate);
  chain.addRational(outputRate);
  return chain.stages;
}

function branchesFor(inputRate: number, outputRate: number): number {
  return outputRate / gcd(inputRate, outputRate);
}

/** Appends stages, tracking the current rate and the whole-sample cumulative delay. */
class ChainBuilder {
  readonly stages: StagePlan[] = [];
  private rate: number;
  /** Cumulative delay, a whole number of samples at `rate` (the invariant alignedStage keeps). */
  private delaySamples = 0;

  constructor(
    private readonly inputRate: number,
    private readonly outputRate: number,
    private readonly targets: QualityTargets,
  ) {
    this.rate = inputRate;
  }

  /** Halves the rate. Stops what would alias into the final output band; the rest goes later. */
  addHalfBand(): void {
    const outputNyquist = this.outputRate / 2;
    const spec: LowpassSpec = {
      sampleRate: this.rate,
      passEdgeHz: outputNyquist,
      stopEdgeHz: this.rate / 2 - outputNyquist,
      stopbandAttenuationDb: this.targets.stopbandAttenuationDb,
      passbandRippleDb: this.targets.passbandRippleDb,
      dcGain: 1,
    };
    this.push(1, 2, designHalfBand(spec), spec);
  }

  /** One L/M polyphase stage to `toRate` (the final output rate, or twice it for the detour). */
  addRational(toRate: number): void {
    const rate = this.rate;
    const divisor = gcd(rate, toRate);
    const upFactor = toRate / divisor;
    const downFactor = rate / divisor;
    if (upFactor > MAX_BRANCHES) {
      // Each branch holds ~100 taps; beyond this the coefficient table outgrows the CPU caches.
      throw new AudioError('invalid_sample_rate', `${this.inputRate} -> ${this.outputRate} Hz needs ${upFactor} polyphase branches (at most ${MAX_BRANCHES}); use rates with a larger common divisor`);
    }
    const outputNyquist = this.outputRate / 2;
    const lowerNyquist = Math.min(this.inputRate, this.outputRate) / 2;
    const common = {
      sampleRate: upFactor * rate,
      passEdgeHz: this.targets.passbandFraction * lowerNyquist,
      stopbandAttenuationDb: this.targets.stopbandAttenuationDb,
      passbandRippleDb: this.targets.passbandRippleDb,
      dcGain: upFactor,
    };
    let spec: LowpassSpec;
    let filter: DesignedFilter;
    if (toRate < rate) {
      // Stop whatever would fold into the final output band: everything above its Nyquist
      // frequency when this is the last stage; only from toRate - outputNyquist up on the detour.
      spec = { ...common, stopEdgeHz: toRate - outputNyquist };
      filter = designEquiripple(spec) ?? designKaiser(spec);
    } else {
      // Images of in-band tones sit at rate - f: reject from rate - passEdge upwards.
      spec = { ...common, stopEdgeHz: rate - common.passEdgeHz };
      filter = upFactor === 2 && downFactor === 1 ? designHalfBand(spec) : designNyquist(spec, upFactor);
    }
    this.push(upFactor, downFactor, filter, spec);
  }

  private push(upFactor: number, downFactor: number, filter: DesignedFilter, spec: LowpassSpec): void {
    const stage = alignedStage(this.rate, upFactor, downFactor, filter, spec, this.delaySamples, this.inputRate);
    this.stages.push(stage.plan);
    this.delaySamples = stage.delayOutputSamples;
    this.rate = stage.plan.outputRate;
  }
}

/**
 * Picks the stage's output grid offset so that the cumulative delay is a whole number of output
 * samples, and if that costs at most MAX_ALIGNMENT_PADDING_SECONDS, of chain-input samples too.
 * Whole-sample delays make round trips (8k -> 16k -> 8k) come back exactly aligned, so a plain
 * integer-lag comparison measures them without interpolation error.
 */
function alignedStage(
  rate: number,
  upFactor: number,
  downFactor: number,
  filter: DesignedFilter,
  spec: LowpassSpec,
  delaySamplesBefore: number,
  chainInputRate: number,
): { plan: StagePlan; delayOutputSamples: number } {
  const virtualRate = upFactor * rate;
  const naturalVirtual = delaySamplesBefore * upFactor + (filter.taps.length - 1) / 2;
  const inputStep = virtualRate / gcd(virtualRate, chainInputRate);
  const both = lcm(downFactor, inputStep);
  const modulus = both / virtualRate <= MAX_ALIGNMENT_PADDING_SECONDS ? both : downFactor;
  // The grid offset shifts the output grid later, which removes delay; keep the total >= 0.
  const gridOffset = Math.min(naturalVirtual % modulus, naturalVirtual);
  const totalVirtual = naturalVirtual - gridOffset;
  return {
    plan: { inputRate: rate, outputRate: virtualRate / downFactor, upFactor, downFactor, filter, spec, gridOffset },
    delayOutputSamples: totalVirtual / downFactor,
  };
}

export function gcd(a: number, b: number): number {
  let x = Math.abs(a);
  let y = Math.abs(b);
  while (y !== 0) {
    const t = x % y;
    x = y;
    y = t;
  }
  return x;
}

function lcm(a: number, b: number): number {
  return (a / gcd(a, b)) * b;
}
