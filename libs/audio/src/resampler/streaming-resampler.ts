/**
 * Streaming sample-rate converter for telephony audio (Int16 PCM in, Int16 PCM out).
 *
 * Design goals (in the spirit of speexdsp's resample.c):
 *  - Streaming: state carries across calls, so 20 ms frames, odd-sized chunks and one big buffer
 *    produce bit-identical output. Frame boundaries add nothing.
 *  - No allocation per frame: all buffers are preallocated and only grow when a call brings more
 *    input than any before it; process() returns a view that is reused while its length repeats.
 *  - Linear phase with a reported, whole-sample delay (see resampler-plan.ts, alignedStage).
 *  - Speed goal: speexdsp quality 4 (WASM, SIMD) on 20 ms frames, in plain TypeScript, measured
 *    side by side by `npm run bench:audio`. Reached for 8k -> 16k, 8k -> 24k (about parity) and
 *    22.05k -> 8k (~1.7x faster); not for the sharp decimators, 16k -> 8k (~0.5x) and 24k -> 8k
 *    (~0.7x), where speex's 4-wide SIMD meets our scalar loop on the same amount of filtering.
 *
 * Filter design, 'telephony' quality (pass band to 0.85 of the lower Nyquist frequency, i.e.
 * 3.4 kHz at 8 kHz; >= 83 dB designed where the issue asks >= 80). Figures are measured on the
 * designed prototypes at their own band edges (resampler-design.spec.ts checks the layout and
 * the targets) and confirmed end to end by sine sweeps (resampler-quality.spec.ts):
 *
 *   conversion    stages                               prototype: taps (multiplied per output)    stop / ripple
 *   16k -> 8k     2:1, equiripple (Remez)              101 (51: folded pairs)                     83.0 dB / 0.024 dB
 *   24k -> 8k     2:1 equiripple half-band, then 2/3   31 (9) ; 151 (38 per output, folded)       89.8 dB ; 83.1 dB / 0.024 dB
 *   22.05k -> 8k  320/441 to 16k (wide), then 2:1      Kaiser 4349 (14) ; 101 as 16k -> 8k        83.0 dB / 0.024 dB
 *   8k -> 16k     1:2 equiripple half-band             67: even outputs copy, odd 34 (17 folded)  85.5 dB / 0.001 dB
 *   8k -> 24k     1:3 Kaiser third-band, beta 8.3      107: 1 output in 3 copies; 2 mirrored 36s  83.3 dB / 0.001 dB
 *
 * Other ratios take the same routes (resampler-plan.ts): half-band stages while the rate stays
 * >= 2.5x the output, then one L/M polyphase stage (Remez up to 401 taps, else Kaiser); when that
 * stage would have many branches, a cheap stage to twice the output rate and the 2:1 instead.
 * Upsampling uses Nyquist filters, so one branch in L is a copy. 'high' quality: 100 dB,
 * 0.01 dB, flat to 0.9.
 *
 * Downsampling stops from the output Nyquist frequency up (nothing aliases into the output band);
 * upsampling rejects images of pass-band tones (from inputRate - passEdge up).
 * Structure per ratio: zero taps of Nyquist filters are skipped (one interpolator branch is a
 * plain copy), symmetric branches share multiplies, and consecutive outputs of a branch share
 * loads (kernels/).
 */
import { PolyphaseStage } from './polyphase-stage';
import { planStages, type ResamplerQuality } from './resampler-plan';
import { AudioError } from '../audio-error';

export type { ResamplerQuality } from './resampler-plan';

export interface ResamplerOptions {
  readonly inputRate: number;
  readonly outputRate: number;
  /** 'telephony' (default): >= 80 dB stop band, flat to 0.85 of Nyquist. 'high': 100 dB, 0.9. */
  readonly quality?: ResamplerQuality;
}

const MAX_RATE = 384_000;

export class StreamingResampler {
  readonly inputRate: number;
  readonly outputRate: number;
  readonly quality: ResamplerQuality;
  /** Group delay, in input samples (a whole number for every ratio whose rates share a 1 ms grid). */
  readonly delayInputSamples: number;
  /** Group delay, in output samples (always a whole number). */
  readonly delayOutputSamples: number;
  readonly delayMs: number;

  private readonly stages: readonly PolyphaseStage[];
  /** Float64 output of each stage (the last one feeds the Int16 conversion). */
  private stageOutputs: Float64Array[];
  private output: Int16Array;
  private outputView: Int16Array;
  private readonly flushZeros: Int16Array;
  private inputSamplesSinceReset = 0;
  private outputSamplesSinceReset = 0;

  constructor(options: ResamplerOptions) {
    const { inputRate, outputRate } = options;
    const quality = options.quality ?? 'telephony';
    for (const [name, rate] of [['inputRate', inputRate], ['outputRate', outputRate]] as const) {
      if (!Number.isInteger(rate) || rate <= 0 || rate > MAX_RATE) {
        throw new AudioError('invalid_sample_rate', `${name} must be an integer in 1..${MAX_RATE} Hz, got ${String(rate)}`);
      }
    }
    if (quality !== 'telephony' && quality !== 'high') {
      throw new AudioError('invalid_quality', `quality must be 'telephony' or 'high', got ${String(quality)}`);
    }
    this.inputRate = inputRate;
    this.outputRate = outputRate;
    this.quality = quality;
    this.stages = planStages(inputRate, outputRate, quality).map(
      (plan) =>
        new PolyphaseStage({
          inputRate: plan.inputRate,
          upFactor: plan.upFactor,
          downFactor: plan.downFactor,
          prototype: plan.filter.taps,
          gridOffset: plan.gridOffset,
        }),
    );
    const delaySeconds = this.stages.reduce((sum, stage) => sum + stage.delaySeconds, 0);
    this.delayOutputSamples = Math.round(delaySeconds * outputRate);
    // Rounded to 1e-9 sample: whole numbers come out whole, not 17.999999999999996.
    this.delayInputSamples = Math.round(delaySeconds * inputRate * 1e9) / 1e9;
    this.delayMs = delaySeconds * 1000;
    this.stageOutputs = this.stages.map(() => new Float64Array(0));
    this.output = new Int16Array(0);
    this.outputView = this.output;
    this.flushZeros = new Int16Array(256);
  }

  /** Exact number of samples the next process() of `inputLength` samples will return. */
  outputLengthFor(inputLength: number): number {
    if (this.stages.length === 0) return inputLength;
    let length = inputLength;
    for (const stage of this.stages) length = stage.outputLengthFor(length);
    return length;
  }

  /**
   * Resamples `input` (any length, including 0) and returns every output sample it completes.
   * The result is a view over an internal buffer: valid until the next call, copy it to keep it.
   */
  process(input: Int16Array): Int16Array {
    const count = this.processInternal(input, input.length);
    return this.viewOf(count);
  }

  /** As process(), but writes into `output` (which must hold outputLengthFor(input.length)). */
  processInto(input: Int16Array, output: Int16Array): number {
    const needed = this.outputLengthFor(input.length);
    if (output.length < needed) {
      throw new AudioError('output_too_small', `output holds ${output.length} samples, ${needed} needed`);
    }
    const count = this.processInternal(input, input.length);
    output.set(this.output.subarray(0, count));
    return count;
  }

  /**
   * Ends the stream: feeds silence through the filters until the output covers the last input
   * sample (total output = floor((inputs - 1) * outputRate / inputRate) + 1 + delayOutputSamples),
   * returns that tail as a new array (once per stream, so allocating is fine), then resets.
   */
  flush(): Int16Array {
    const inputs = this.inputSamplesSinceReset;
    const target = inputs === 0 ? 0 : Math.floor(((inputs - 1) * this.outputRate) / this.inputRate) + 1 + this.delayOutputSamples;
    const tail = new Int16Array(Math.max(0, target - this.outputSamplesSinceReset));
    let produced = 0;
    while (produced < tail.length) {
      const count = this.processInternal(this.flushZeros, this.flushZeros.length);
      const take = Math.min(count, tail.length - produced);
      tail.set(this.output.subarray(0, take), produced);
      produced += take;
    }
    this.reset();
    return tail;
  }

  /** Forgets all history (the next sample starts a new stream). */
  reset(): void {
    for (const stage of this.stages) stage.reset();
    this.inputSamplesSinceReset = 0;
    this.outputSamplesSinceReset = 0;
  }

  private processInternal(input: Int16Array, inputLength: number): number {
    this.inputSamplesSinceReset += inputLength;
    if (this.stages.length === 0) {
      this.ensureOutputCapacity(inputLength);
      this.output.set(input.subarray(0, inputLength));
      this.outputSamplesSinceReset += inputLength;
      return inputLength;
    }
    let source: Int16Array | Float64Array = input;
    let sourceLength = inputLength;
    for (let s = 0; s < this.stages.length; s++) {
      const stage = this.stages[s]!;
      const needed = stage.outputLengthFor(sourceLength);
      let buffer = this.stageOutputs[s]!;
      if (buffer.length < needed) {
        buffer = new Float64Array(needed + (needed >> 1));
        this.stageOutputs[s] = buffer;
      }
      sourceLength = stage.process(source, sourceLength, buffer);
      source = buffer;
    }
    this.ensureOutputCapacity(sourceLength);
    toInt16(source as Float64Array, this.output, sourceLength);
    this.outputSamplesSinceReset += sourceLength;
    return sourceLength;
  }

  private ensureOutputCapacity(length: number): void {
    if (this.output.length >= length) return;
    this.output = new Int16Array(length + (length >> 1));
    this.outputView = this.output.subarray(0, 0);
  }

  /** Reuses the previous view when the length repeats (steady 20 ms frames), else makes one. */
  private viewOf(length: number): Int16Array {
    if (this.outputView.length !== length || this.outputView.buffer !== this.output.buffer) {
      this.outputView = this.output.subarray(0, length);
    }
    return this.outputView;
  }
}

/**
 * Rounds half up (as Math.round) and saturates. Shifting into 0..65535 first lets `| 0` (a plain
 * truncation, and floor for non-negative values) do the rounding; measured ~25% faster.
 */
function toInt16(source: Float64Array, target: Int16Array, length: number): void {
  for (let i = 0; i < length; i++) {
    let v = source[i]! + 32768.5;
    v = v < 0 ? 0 : v > 65535 ? 65535 : v;
    target[i] = (v | 0) - 32768;
  }
}
