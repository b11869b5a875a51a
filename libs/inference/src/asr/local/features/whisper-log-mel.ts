import { buildMelFilterBank, type MelFilterBank } from './mel-filter-bank';
import { RealFft } from './real-fft';

export interface WhisperLogMelOptions {
  sampleRate?: number;
  nFft?: number;
  hopLength?: number;
  melBins?: number;
  /** Output frames: 3000 for Whisper (30 s), 800 for Smart Turn (8 s). */
  frames?: number;
}

export interface LogMelInputOptions {
  /**
   * 'start' (Whisper): the first window of audio, zero-padded after it. 'end' (Smart Turn): the
   * last window, zero-padded before it.
   */
  align?: 'start' | 'end';
  /** Zero mean, unit variance over the window before the STFT (Smart Turn's do_normalize). */
  normalize?: boolean;
}

const SILENT_LOG10 = -10;
/** The value every frame of pure silence gets: log10(1e-10) = -10, then (x + 4) / 4. */
export const LOG_MEL_SILENCE = (SILENT_LOG10 + 4) / 4;

/**
 * Whisper's log-mel spectrogram in TypeScript, matching WhisperFeatureExtractor: the window padded
 * to `frames * hopLength` samples, centred STFT (reflect padding, periodic Hann, n_fft 400, hop
 * 160), power spectrum, 80 Slaney mel filters, log10 floored at 1e-10, clamped to (max - 8), then
 * (x + 4) / 4. Output is [melBins, frames], mel-major, as the models take it.
 * One instance reuses its buffers, so it serves one caller at a time; frames that lie wholly in
 * zero padding skip the FFT (their power is exactly zero).
 */
export class WhisperLogMel {
  readonly sampleRate: number;
  readonly nFft: number;
  readonly hopLength: number;
  readonly melBins: number;
  readonly frames: number;
  /** Samples in one window: frames * hopLength. */
  readonly windowSamples: number;
  private readonly fft: RealFft;
  private readonly filters: MelFilterBank;
  private readonly hann: Float64Array;
  private readonly window: Float32Array;
  private readonly frame: Float64Array;
  private readonly spectrumRe: Float64Array;
  private readonly spectrumIm: Float64Array;
  private readonly power: Float64Array;

  constructor(options: WhisperLogMelOptions = {}) {
    this.sampleRate = options.sampleRate ?? 16000;
    this.nFft = options.nFft ?? 400;
    this.hopLength = options.hopLength ?? 160;
    this.melBins = options.melBins ?? 80;
    this.frames = options.frames ?? 3000;
    this.windowSamples = this.frames * this.hopLength;
    this.fft = new RealFft(this.nFft);
    this.filters = buildMelFilterBank(this.sampleRate, this.nFft, this.melBins);
    this.hann = Float64Array.from({ length: this.nFft }, (_, n) => 0.5 - 0.5 * Math.cos((2 * Math.PI * n) / this.nFft));
    this.window = new Float32Array(this.windowSamples);
    this.frame = new Float64Array(this.nFft);
    this.spectrumRe = new Float64Array(this.fft.bins);
    this.spectrumIm = new Float64Array(this.fft.bins);
    this.power = new Float64Array(this.filters.fftBins);
  }

  /**
   * Features of 16-bit PCM at `sampleRate`. Returns a new array (it may be handed to a worker
   * thread and detached there, so it is never reused).
   */
  compute(pcm: Int16Array, options: LogMelInputOptions = {}): Float32Array {
    const { window, windowSamples } = this;
    window.fill(0);
    const take = Math.min(pcm.length, windowSamples);
    const source = options.align === 'end' ? pcm.length - take : 0;
    const target = options.align === 'end' ? windowSamples - take : 0;
    for (let i = 0; i < take; i++) window[target + i] = (pcm[source + i] as number) / 32768;
    if (options.normalize) normalizeInPlace(window);
    return this.logMel(window, options.normalize ? { first: 0, last: windowSamples - 1 } : nonZeroExtent(window));
  }

  private logMel(window: Float32Array, extent: { first: number; last: number }): Float32Array {
    const { frames, melBins, nFft, hopLength, filters, frame, power, spectrumRe, spectrumIm, hann } = this;
    const output = new Float32Array(melBins * frames);
    const half = nFft / 2;
    const n = window.length;
    let maxLog = -Infinity;
    for (let t = 0; t < frames; t++) {
      const center = t * hopLength;
      const silent = extent.last < extent.first || Math.min(n - 1, center + half) < extent.first || Math.max(0, center - half) > extent.last;
      if (silent) {
        // Wholly in zero padding: zero power, so every bin is log10(1e-10).
        for (let m = 0; m < melBins; m++) output[m * frames + t] = SILENT_LOG10;
        maxLog = Math.max(maxLog, SILENT_LOG10);
        continue;
      }
      for (let i = 0; i < nFft; i++) frame[i] = reflectAt(window, center - half + i) * (hann[i] as number);
      this.fft.transform(frame, spectrumRe, spectrumIm);
      for (let bin = 0; bin < filters.fftBins; bin++) {
        const re = spectrumRe[bin] as number;
        const im = spectrumIm[bin] as number;
        power[bin] = re * re + im * im;
      }
      for (let m = 0; m < melBins; m++) {
        let energy = 0;
        const rowOffset = m * filters.fftBins;
        for (let bin = filters.start[m] as number; bin < (filters.end[m] as number); bin++) {
          energy += (filters.weights[rowOffset + bin] as number) * (power[bin] as number);
        }
        const value = Math.log10(Math.max(energy, 1e-10));
        output[m * frames + t] = value;
        if (value > maxLog) maxLog = value;
      }
    }
    const floor = maxLog - 8;
    for (let i = 0; i < output.length; i++) output[i] = (Math.max(output[i] as number, floor) + 4) / 4;
    return output;
  }
}

/** Sample i of the window with numpy/torch 'reflect' padding (the edge sample is not repeated). */
function reflectAt(window: Float32Array, i: number): number {
  const n = window.length;
  if (i < 0) return window[-i] as number;
  if (i >= n) return window[2 * n - 2 - i] as number;
  return window[i] as number;
}

function nonZeroExtent(window: Float32Array): { first: number; last: number } {
  let first = 0;
  while (first < window.length && window[first] === 0) first++;
  let last = window.length - 1;
  while (last >= first && window[last] === 0) last--;
  return { first, last };
}

function normalizeInPlace(window: Float32Array): void {
  let sum = 0;
  for (let i = 0; i < window.length; i++) sum += window[i] as number;
  const mean = sum / window.length;
  let squares = 0;
  for (let i = 0; i < window.length; i++) squares += ((window[i] as number) - mean) ** 2;
  const scale = 1 / Math.sqrt(squares / window.length + 1e-7);
  for (let i = 0; i < window.length; i++) window[i] = ((window[i] as number) - mean) * scale;
}
