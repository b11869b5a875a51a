import { concatPcm16, rmsDbfs, sineTone, toneLevelDbfs } from '@switchboard/audio';
import type { ResamplerContender } from './audio-bench-resamplers';

/**
 * Sine-sweep quality figures for any contender, measured exactly like the library's own unit test
 * (resampler-quality.spec.ts): tones at -1 dBFS in 20 ms frames, start-up transient skipped.
 *  - Pass band: largest level change for tones up to 0.85 of the lower Nyquist frequency.
 *  - Downsampling: loudest output for tones between the output and input Nyquist frequencies
 *    (anything there can only be aliasing).
 *  - Upsampling: loudest image of a pass-band tone (at k * inputRate +- f).
 */
export interface QualityFigures {
  readonly passbandRippleDb: number;
  /** Worst alias or image level, dBFS (full-scale sine = 0 dBFS). */
  readonly worstSpuriousDbfs: number;
}

const TONE_DBFS = -1;
const TONE_MS = 250;
const SKIP_MS = 50;
const PASS_FRACTION = 0.85;

export async function measureQuality(contender: ResamplerContender, inputRate: number, outputRate: number, stepHz: number): Promise<QualityFigures> {
  const lowerNyquist = Math.min(inputRate, outputRate) / 2;
  let passbandRippleDb = 0;
  let worstSpuriousDbfs = -Infinity;
  for (let f = stepHz; f <= PASS_FRACTION * lowerNyquist; f += stepHz) {
    const output = await resampleTone(contender, inputRate, outputRate, f);
    const skip = Math.round((SKIP_MS * outputRate) / 1000);
    passbandRippleDb = Math.max(passbandRippleDb, Math.abs(rmsDbfs(output, skip) - TONE_DBFS));
    if (outputRate > inputRate) {
      for (let k = 1; k * inputRate - f < outputRate / 2; k++) {
        for (const image of [k * inputRate - f, k * inputRate + f]) {
          if (image < outputRate / 2) worstSpuriousDbfs = Math.max(worstSpuriousDbfs, toneLevelDbfs(output, image, outputRate, skip));
        }
      }
    }
  }
  if (outputRate < inputRate) {
    for (let f = outputRate / 2 + stepHz / 2; f < inputRate / 2; f += stepHz) {
      const output = await resampleTone(contender, inputRate, outputRate, f);
      worstSpuriousDbfs = Math.max(worstSpuriousDbfs, rmsDbfs(output, Math.round((SKIP_MS * outputRate) / 1000)));
    }
  }
  return { passbandRippleDb, worstSpuriousDbfs };
}

async function resampleTone(contender: ResamplerContender, inputRate: number, outputRate: number, frequencyHz: number): Promise<Int16Array> {
  const tone = sineTone({ frequencyHz, sampleRate: inputRate, durationMs: TONE_MS, amplitudeDbfs: TONE_DBFS });
  await contender.prepare?.(inputRate, outputRate, 1);
  const resampler = contender.create(inputRate, outputRate);
  const frameLength = inputRate / 50;
  const parts: Int16Array[] = [];
  for (let offset = 0; offset + frameLength <= tone.length; offset += frameLength) {
    parts.push(resampler.process(tone.subarray(offset, offset + frameLength)).slice());
  }
  resampler.dispose();
  return concatPcm16(parts);
}
