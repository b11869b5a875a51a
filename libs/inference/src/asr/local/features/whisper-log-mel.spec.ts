import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readWav, sineTone } from '@switchboard/audio';
import { buildMelFilterBank, hzToMel, melToHz } from './mel-filter-bank';
import { MixedRadixFft } from './mixed-radix-fft';
import { RealFft } from './real-fft';
import { LOG_MEL_SILENCE, WhisperLogMel } from './whisper-log-mel';

const FIXTURES = join(__dirname, '../../../../../../test/fixtures/speech');

/** The DFT by its definition (angles from a table, so the reference stays fast enough to run). */
function naiveDft(re: Float64Array, im: Float64Array, bins = re.length): { re: Float64Array; im: Float64Array } {
  const n = re.length;
  const cos = Float64Array.from({ length: n }, (_, i) => Math.cos((-2 * Math.PI * i) / n));
  const sin = Float64Array.from({ length: n }, (_, i) => Math.sin((-2 * Math.PI * i) / n));
  const out = { re: new Float64Array(bins), im: new Float64Array(bins) };
  for (let k = 0; k < bins; k++) {
    let sumRe = 0;
    let sumIm = 0;
    for (let t = 0; t < n; t++) {
      const e = (k * t) % n;
      sumRe += re[t]! * cos[e]! - im[t]! * sin[e]!;
      sumIm += re[t]! * sin[e]! + im[t]! * cos[e]!;
    }
    out.re[k] = sumRe;
    out.im[k] = sumIm;
  }
  return out;
}

function seeded(n: number, seed: number): Float64Array {
  return Float64Array.from({ length: n }, (_, i) => Math.sin(i * 12.9898 + seed * 78.233) * 0.5);
}

describe('MixedRadixFft / RealFft', () => {
  it.each([1, 2, 12, 21, 49, 200, 400])('matches a direct DFT for size %i', (size) => {
    const re = seeded(size, 1);
    const im = seeded(size, 2);
    const expected = naiveDft(re, im);
    const outRe = new Float64Array(size);
    const outIm = new Float64Array(size);
    new MixedRadixFft(size).transform(re, im, outRe, outIm);
    for (let k = 0; k < size; k++) {
      expect(outRe[k]).toBeCloseTo(expected.re[k]!, 9);
      expect(outIm[k]).toBeCloseTo(expected.im[k]!, 9);
    }
  });

  it('RealFft gives bins 0..N/2 of the DFT of a real signal (N = 400, Whisper n_fft)', () => {
    const input = seeded(400, 3);
    const expected = naiveDft(input, new Float64Array(400));
    const fft = new RealFft(400);
    const outRe = new Float64Array(fft.bins);
    const outIm = new Float64Array(fft.bins);
    fft.transform(input, outRe, outIm);
    expect(fft.bins).toBe(201);
    for (let k = 0; k < fft.bins; k++) {
      expect(outRe[k]).toBeCloseTo(expected.re[k]!, 9);
      expect(outIm[k]).toBeCloseTo(expected.im[k]!, 9);
    }
  });

  it('refuses sizes it cannot do with a clear error', () => {
    expect(() => new MixedRadixFft(0)).toThrow(/positive integer/);
    expect(() => new RealFft(401)).toThrow(/even/);
  });
});

/** The textbook algorithm, frame by frame with a direct DFT and no shortcuts, for comparison. */
function referenceLogMel(pcm: Int16Array, frames: number): Float32Array {
  const nFft = 400;
  const hop = 160;
  const windowSamples = frames * hop;
  const audio = new Float64Array(windowSamples);
  for (let i = 0; i < Math.min(pcm.length, windowSamples); i++) audio[i] = pcm[i]! / 32768;
  const padded = new Float64Array(windowSamples + nFft);
  for (let i = 0; i < padded.length; i++) {
    const j = i - nFft / 2;
    padded[i] = audio[j < 0 ? -j : j >= windowSamples ? 2 * windowSamples - 2 - j : j]!;
  }
  const filters = buildMelFilterBank(16000, nFft, 80);
  const out = new Float32Array(80 * frames);
  for (let t = 0; t < frames; t++) {
    const frame = Float64Array.from({ length: nFft }, (_, i) => padded[t * hop + i]! * (0.5 - 0.5 * Math.cos((2 * Math.PI * i) / nFft)));
    const spectrum = naiveDft(frame, new Float64Array(nFft), nFft / 2 + 1);
    for (let m = 0; m < 80; m++) {
      let energy = 0;
      for (let bin = 0; bin <= nFft / 2; bin++) energy += filters.weights[m * 201 + bin]! * (spectrum.re[bin]! ** 2 + spectrum.im[bin]! ** 2);
      out[m * frames + t] = Math.log10(Math.max(energy, 1e-10));
    }
  }
  const max = out.reduce((a, b) => Math.max(a, b), -Infinity);
  return out.map((v) => (Math.max(v, max - 8) + 4) / 4);
}

describe('WhisperLogMel', () => {
  const whisper = new WhisperLogMel();

  it('gives the floor value for every bin of pure silence, in the [80, 3000] layout', () => {
    const features = whisper.compute(new Int16Array(16000));
    expect(features.length).toBe(80 * 3000);
    expect(LOG_MEL_SILENCE).toBe(-1.5);
    expect(features.every((v) => v === LOG_MEL_SILENCE)).toBe(true);
  });

  it('puts a 1 kHz tone in mel bin 26, the filter centred nearest 1 kHz', () => {
    const features = whisper.compute(sineTone({ frequencyHz: 1000, sampleRate: 16000, durationMs: 1000 }));
    const meanOverTone = Array.from({ length: 80 }, (_, m) => {
      let sum = 0;
      for (let t = 10; t < 90; t++) sum += features[m * 3000 + t]!;
      return sum / 80;
    });
    const peak = meanOverTone.indexOf(Math.max(...meanOverTone));
    const centreHz = (m: number): number => melToHz(((m + 1) * hzToMel(8000)) / 81);
    expect(peak).toBe(26);
    expect(Math.abs(centreHz(peak) - 1000)).toBeLessThan(Math.abs(centreHz(peak - 1) - 1000));
    expect(Math.abs(centreHz(peak) - 1000)).toBeLessThan(Math.abs(centreHz(peak + 1) - 1000));
    // Dynamic range is clamped to 8 decades below the peak: 2 after the (x + 4) / 4 scaling.
    const max = features.reduce((a, b) => Math.max(a, b), -Infinity);
    const min = features.reduce((a, b) => Math.min(a, b), Infinity);
    expect(max - min).toBeCloseTo(2, 5);
  });

  it('matches a direct-DFT reference on real speech, including frames skipped as padding', () => {
    const speech = readWav(readFileSync(join(FIXTURES, 'goodbye.16k.wav'))).samples;
    const frames = 60;
    const short = new WhisperLogMel({ frames });
    // 0.4 s of speech in a 0.6 s window: the last frames lie in zero padding.
    const excerpt = speech.subarray(8000, 8000 + 6400);
    const expected = referenceLogMel(excerpt, frames);
    const actual = short.compute(excerpt);
    let worst = 0;
    for (let i = 0; i < expected.length; i++) worst = Math.max(worst, Math.abs(actual[i]! - expected[i]!));
    expect(worst).toBeLessThan(1e-4);
  });

  it("align 'end' keeps the last window and pads in front; normalize makes level irrelevant (Smart Turn)", () => {
    const eightSeconds = new WhisperLogMel({ frames: 800 });
    const tone = sineTone({ frequencyHz: 440, sampleRate: 16000, durationMs: 500 });
    const endAligned = eightSeconds.compute(tone, { align: 'end' });
    expect(endAligned[10]).toBe(endAligned[20]); // silent start: the floor
    expect(endAligned[799]).toBeGreaterThan(endAligned[10]!);
    const quiet = sineTone({ frequencyHz: 440, sampleRate: 16000, durationMs: 500, amplitudeDbfs: -30 });
    const loudNormalized = eightSeconds.compute(tone, { align: 'end', normalize: true });
    const quietNormalized = eightSeconds.compute(quiet, { align: 'end', normalize: true });
    let worst = 0;
    for (let i = 0; i < loudNormalized.length; i++) worst = Math.max(worst, Math.abs(loudNormalized[i]! - quietNormalized[i]!));
    expect(worst).toBeLessThan(0.05);
  });
});
