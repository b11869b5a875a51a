/**
 * Slaney-style mel filter bank with Slaney area normalisation: what librosa.filters.mel builds by
 * default and what Whisper's (and Smart Turn's) feature extractor uses.
 */
export interface MelFilterBank {
  melBins: number;
  /** FFT bins per frame: nFft / 2 + 1. */
  fftBins: number;
  /** Dense weights [melBins * fftBins]. */
  weights: Float32Array;
  /** First and one-past-last non-zero FFT bin of each filter (the filters are narrow). */
  start: Int32Array;
  end: Int32Array;
}

const MIN_LOG_HZ = 1000;
const LINEAR_HZ_PER_MEL = 200 / 3;
const MIN_LOG_MEL = MIN_LOG_HZ / LINEAR_HZ_PER_MEL;
const LOG_STEP = Math.log(6.4) / 27;

export function hzToMel(hz: number): number {
  return hz < MIN_LOG_HZ ? hz / LINEAR_HZ_PER_MEL : MIN_LOG_MEL + Math.log(hz / MIN_LOG_HZ) / LOG_STEP;
}

export function melToHz(mel: number): number {
  return mel < MIN_LOG_MEL ? mel * LINEAR_HZ_PER_MEL : MIN_LOG_HZ * Math.exp(LOG_STEP * (mel - MIN_LOG_MEL));
}

export function buildMelFilterBank(sampleRate: number, nFft: number, melBins: number): MelFilterBank {
  const fftBins = Math.floor(nFft / 2) + 1;
  const fftFrequencies = Float64Array.from({ length: fftBins }, (_, i) => (i * sampleRate) / nFft);
  const maxMel = hzToMel(sampleRate / 2);
  const melEdges = Float64Array.from({ length: melBins + 2 }, (_, i) => melToHz((i * maxMel) / (melBins + 1)));
  const weights = new Float32Array(melBins * fftBins);
  const start = new Int32Array(melBins).fill(fftBins);
  const end = new Int32Array(melBins);
  for (let m = 0; m < melBins; m++) {
    const lowHz = melEdges[m] as number;
    const centerHz = melEdges[m + 1] as number;
    const highHz = melEdges[m + 2] as number;
    const areaNorm = 2 / (highHz - lowHz);
    for (let bin = 0; bin < fftBins; bin++) {
      const f = fftFrequencies[bin] as number;
      const rising = (f - lowHz) / (centerHz - lowHz);
      const falling = (highHz - f) / (highHz - centerHz);
      const weight = Math.max(0, Math.min(rising, falling)) * areaNorm;
      if (weight > 0) {
        weights[m * fftBins + bin] = weight;
        start[m] = Math.min(start[m] as number, bin);
        end[m] = bin + 1;
      }
    }
    if ((end[m] as number) === 0) start[m] = 0;
  }
  return { melBins, fftBins, weights, start, end };
}
