import { AudioError } from '../audio-error';

/**
 * Level and fidelity measurements on 16-bit PCM, used by the resampler tests, the bench and the
 * end-to-end echo test.
 *
 * Levels are dBFS relative to a full-scale sine (AES17): a sine with peak 32767 reads 0 dBFS, so
 * a tone generated at X dBFS by sineTone() measures X here. Silence reads -Infinity.
 */

/** RMS level of samples[start, end) in dBFS (full-scale sine = 0 dBFS). */
export function rmsDbfs(samples: ArrayLike<number>, start = 0, end = samples.length): number {
  if (!(start >= 0 && end <= samples.length && start < end)) {
    throw new AudioError('invalid_signal', `range ${start}..${end} is empty or outside 0..${samples.length}`);
  }
  let sum = 0;
  for (let i = start; i < end; i++) sum += samples[i]! * samples[i]!;
  const rms = Math.sqrt(sum / (end - start));
  return 20 * Math.log10((rms * Math.SQRT2) / 32767);
}

/**
 * Level (dBFS, full-scale sine = 0) of the component at `frequencyHz` in samples[start, end):
 * a Hann-windowed single-bin DFT, so a tone elsewhere in the signal leaks into it only through the
 * window's side lobes (below -100 dB once the tones are a few hundred bins apart). Used to find
 * resampler images next to a loud pass-band tone.
 */
export function toneLevelDbfs(samples: ArrayLike<number>, frequencyHz: number, sampleRate: number, start = 0, end = samples.length): number {
  if (!(start >= 0 && end <= samples.length && end - start >= 2)) {
    throw new AudioError('invalid_signal', `range ${start}..${end} is too short or outside 0..${samples.length}`);
  }
  const length = end - start;
  // Probe e^{-i step n} and the Hann window's cosine advance by rotation: no Math.* call per
  // sample (those are ~100x slower under Jest's VM context, where the tests run this a lot).
  const step = (2 * Math.PI * frequencyHz) / sampleRate;
  const probeStepRe = Math.cos(step);
  const probeStepIm = -Math.sin(step);
  const windowStep = (2 * Math.PI) / (length - 1);
  const windowStepRe = Math.cos(windowStep);
  const windowStepIm = Math.sin(windowStep);
  let probeRe = 1;
  let probeIm = 0;
  let windowRe = 1;
  let windowIm = 0;
  let re = 0;
  let im = 0;
  let windowSum = 0;
  for (let n = 0; n < length; n++) {
    const w = 0.5 - 0.5 * windowRe;
    const x = w * samples[start + n]!;
    re += x * probeRe;
    im += x * probeIm;
    windowSum += w;
    const nextProbeRe = probeRe * probeStepRe - probeIm * probeStepIm;
    probeIm = probeRe * probeStepIm + probeIm * probeStepRe;
    probeRe = nextProbeRe;
    const nextWindowRe = windowRe * windowStepRe - windowIm * windowStepIm;
    windowIm = windowRe * windowStepIm + windowIm * windowStepRe;
    windowRe = nextWindowRe;
  }
  const amplitude = (2 * Math.sqrt(re * re + im * im)) / windowSum;
  return 20 * Math.log10(amplitude / 32767);
}

/**
 * SNR of `received` against `reference`, sample by sample over the reference's length (received
 * must be at least as long): 10 log10(sum ref^2 / sum (ref - rx)^2). No alignment, no gain.
 */
export function snrDb(reference: ArrayLike<number>, received: ArrayLike<number>): number {
  if (received.length < reference.length) {
    throw new AudioError('invalid_signal', `received (${received.length}) is shorter than reference (${reference.length})`);
  }
  return snrAt(reference, received, 0, 1);
}

export interface BestLagOptions {
  /** Lags searched: minLagSamples..maxLagSamples (received delayed by lag: rx[i + lag] ~ ref[i]). */
  readonly minLagSamples?: number;
  readonly maxLagSamples: number;
  /**
   * false (default): SNR of rx as received, so level errors count as noise.
   * true: rx is first scaled by the least-squares gain sum(ref*rx)/sum(rx^2), so only shape counts.
   */
  readonly applyGain?: boolean;
}

export interface BestLagResult {
  readonly snrDb: number;
  readonly lagSamples: number;
  /** The gain applied (1 unless applyGain). */
  readonly gain: number;
}

/**
 * Aligns `received` to `reference` by the lag that maximises their cross-correlation, then
 * measures SNR = 10 log10(sum ref^2 / sum (ref - gain * rx)^2) over the whole reference.
 * Only lags where the received signal covers the entire reference are searched, so pass the
 * steady-state part of the reference (trimmed) and the full received signal.
 */
export function bestLagSnr(reference: ArrayLike<number>, received: ArrayLike<number>, options: BestLagOptions): BestLagResult {
  const minLag = Math.max(0, options.minLagSamples ?? 0);
  const maxLag = Math.min(options.maxLagSamples, received.length - reference.length);
  if (reference.length === 0) throw new AudioError('invalid_signal', 'reference is empty');
  if (maxLag < minLag) {
    throw new AudioError('invalid_signal', `received (${received.length}) cannot cover the reference (${reference.length}) at any lag in ${minLag}..${options.maxLagSamples}`);
  }
  let bestLag = minLag;
  let bestCorrelation = -Infinity;
  for (let lag = minLag; lag <= maxLag; lag++) {
    let correlation = 0;
    for (let i = 0; i < reference.length; i++) correlation += reference[i]! * received[i + lag]!;
    if (correlation > bestCorrelation) {
      bestCorrelation = correlation;
      bestLag = lag;
    }
  }
  let gain = 1;
  if (options.applyGain === true) {
    let receivedEnergy = 0;
    for (let i = 0; i < reference.length; i++) receivedEnergy += received[i + bestLag]! ** 2;
    gain = receivedEnergy > 0 ? bestCorrelation / receivedEnergy : 1;
  }
  return { snrDb: snrAt(reference, received, bestLag, gain), lagSamples: bestLag, gain };
}

function snrAt(reference: ArrayLike<number>, received: ArrayLike<number>, lag: number, gain: number): number {
  let signal = 0;
  let noise = 0;
  for (let i = 0; i < reference.length; i++) {
    const r = reference[i]!;
    const e = r - gain * received[i + lag]!;
    signal += r * r;
    noise += e * e;
  }
  return 10 * Math.log10(signal / noise);
}
