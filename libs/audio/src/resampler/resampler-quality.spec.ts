import { rmsDbfs, toneLevelDbfs } from '../analysis/signal-metrics';
import { sineTone } from '../analysis/tone';
import { KERNELS, resampleInFrames } from '@switchboard/testing';
import type { ResamplerKernel } from './streaming-resampler';

/**
 * The quality targets, measured end to end with sine sweeps through the streaming API in
 * 20 ms frames (levels in dBFS, full-scale sine = 0 dBFS; see signal-metrics.ts):
 *  - downsampling: a -1 dBFS tone anywhere between the output and input Nyquist frequencies
 *    (every 50 Hz; 100 Hz for the wideband 44.1k and 48k inputs) must come out below -80 dBFS:
 *    whatever comes out is aliasing;
 *  - upsampling: the images of -1 dBFS tones up to 0.85 of the input Nyquist frequency (at
 *    k * inputRate +- f) must be below -80 dBFS;
 *  - pass band: tones up to 0.85 of the lower Nyquist frequency (3.4 kHz when one side is 8 kHz)
 *    keep their level within 0.05 dB (the issue asks 0.5 dB; the 8k -> 16k -> 8k round trip of
 *    the echo test needs it far flatter, see echo-chain.spec.ts).
 * Both kernels: the float32 SIMD one must keep the float64 one's stop band.
 */
const TONE_DBFS = -1;
const TONE_MS = 200;
const SKIP_MS = 40; // start-up transient: the filters span at most ~10 ms

function tone(frequencyHz: number, sampleRate: number): Int16Array {
  return sineTone({ frequencyHz, sampleRate, durationMs: TONE_MS, amplitudeDbfs: TONE_DBFS });
}

function steadyPart(kernel: ResamplerKernel, inputRate: number, outputRate: number, frequencyHz: number): { output: Int16Array; from: number } {
  const output = resampleInFrames({ inputRate, outputRate, kernel }, tone(frequencyHz, inputRate), false);
  return { output, from: Math.round((SKIP_MS * outputRate) / 1000) };
}

// [inputRate, outputRate, sweep step in Hz]
const DOWNSAMPLING: ReadonlyArray<readonly [number, number, number]> = [
  [16000, 8000, 50],
  [24000, 8000, 50],
  [22050, 8000, 50],
  [44100, 16000, 100],
  [48000, 8000, 100],
];
const UPSAMPLING: ReadonlyArray<readonly [number, number]> = [
  [8000, 16000],
  [8000, 24000],
  [16000, 24000],
];

describe.each(KERNELS)('resampler quality (sine sweeps, %s kernel)', (kernel) => {
  it.each(DOWNSAMPLING)('%i -> %i: nothing between the Nyquist frequencies aliases above -80 dBFS', (inputRate, outputRate, stepHz) => {
    let worst = -Infinity;
    for (let f = outputRate / 2 + stepHz / 2; f < inputRate / 2; f += stepHz) {
      const { output, from } = steadyPart(kernel, inputRate, outputRate, f);
      worst = Math.max(worst, rmsDbfs(output, from));
    }
    expect(worst).toBeLessThan(-80);
  });

  it.each(UPSAMPLING)('%i -> %i: images of pass-band tones stay below -80 dBFS', (inputRate, outputRate) => {
    let worst = -Infinity;
    for (let f = 100; f <= 0.85 * (inputRate / 2); f += 100) {
      const { output, from } = steadyPart(kernel, inputRate, outputRate, f);
      for (let k = 1; k * inputRate - f < outputRate / 2; k++) {
        for (const image of [k * inputRate - f, k * inputRate + f]) {
          if (image < outputRate / 2) worst = Math.max(worst, toneLevelDbfs(output, image, outputRate, from));
        }
      }
    }
    expect(worst).toBeLessThan(-80);
  });

  it.each([...DOWNSAMPLING.map(([i, o]) => [i, o] as const), ...UPSAMPLING])('%i -> %i: pass band flat within 0.05 dB up to 0.85 of the lower Nyquist', (inputRate, outputRate) => {
    const edge = 0.85 * (Math.min(inputRate, outputRate) / 2);
    let worst = 0;
    for (let f = 100; f <= edge; f += 100) {
      const { output, from } = steadyPart(kernel, inputRate, outputRate, f);
      worst = Math.max(worst, Math.abs(rmsDbfs(output, from) - TONE_DBFS));
    }
    const { output, from } = steadyPart(kernel, inputRate, outputRate, edge);
    worst = Math.max(worst, Math.abs(rmsDbfs(output, from) - TONE_DBFS));
    expect(worst).toBeLessThan(0.05);
  });

  it('8 kHz sides are flat to exactly 3.4 kHz', () => {
    for (const [inputRate, outputRate] of [
      [8000, 16000],
      [16000, 8000],
      [24000, 8000],
    ] as const) {
      const { output, from } = steadyPart(kernel, inputRate, outputRate, 3400);
      expect(Math.abs(rmsDbfs(output, from) - TONE_DBFS)).toBeLessThan(0.05);
    }
  });
});
