import { AudioError } from '../audio-error';
import { bestLagSnr, rmsDbfs, snrDb, toneLevelDbfs } from './signal-metrics';
import { sineTone } from './tone';

/** Deterministic white-ish noise with the given RMS. */
function noise(length: number, rms: number, seed = 1): Float64Array {
  const out = new Float64Array(length);
  let state = seed;
  for (let i = 0; i < length; i++) {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    out[i] = ((state / 0x7fffffff) * 2 - 1) * rms * Math.sqrt(3);
  }
  return out;
}

describe('rmsDbfs', () => {
  it('reads 0 dBFS for a full-scale sine and -Infinity for silence', () => {
    expect(rmsDbfs(sineTone({ frequencyHz: 1000, sampleRate: 48000, durationMs: 100, amplitudeDbfs: 0 }))).toBeCloseTo(0, 2);
    expect(rmsDbfs(new Int16Array(10))).toBe(-Infinity);
  });

  it('measures a sub-range and rejects empty ranges', () => {
    const samples = Int16Array.from({ length: 100 }, (_, i) => (i < 50 ? 0 : 1000));
    expect(rmsDbfs(samples, 50)).toBeCloseTo(20 * Math.log10((1000 * Math.SQRT2) / 32767), 6);
    expect(() => rmsDbfs(samples, 10, 10)).toThrow(AudioError);
  });
});

describe('toneLevelDbfs', () => {
  it('separates a quiet tone from a loud one 1 kHz away', () => {
    const loud = sineTone({ frequencyHz: 1000, sampleRate: 16000, durationMs: 250, amplitudeDbfs: -1 });
    const quiet = sineTone({ frequencyHz: 2000, sampleRate: 16000, durationMs: 250, amplitudeDbfs: -60 });
    const mix = loud.map((v, i) => v + quiet[i]!);
    expect(toneLevelDbfs(mix, 2000, 16000)).toBeCloseTo(-60, 0);
    expect(toneLevelDbfs(mix, 1000, 16000)).toBeCloseTo(-1, 1);
  });
});

describe('snrDb', () => {
  it('is 10 log10(signal power / error power) sample by sample', () => {
    const reference = noise(10000, 1000);
    const hiss = noise(10000, 10, 7);
    const received = reference.map((v, i) => v + hiss[i]!);
    expect(snrDb(reference, received)).toBeCloseTo(40, 0);
    expect(snrDb(reference, reference)).toBe(Infinity);
    expect(() => snrDb(reference, received.subarray(1))).toThrow(AudioError);
  });
});

describe('bestLagSnr', () => {
  const source = noise(4000, 3000, 3);

  it('finds the delay of a delayed copy and measures the added noise', () => {
    const delay = 37;
    const received = new Float64Array(4100);
    const hiss = noise(4100, 30, 9);
    for (let i = 0; i < received.length; i++) received[i] = (source[i - delay] ?? 0) + hiss[i]!;
    const reference = source.subarray(100, 3900);
    const result = bestLagSnr(reference, received, { maxLagSamples: 200 });
    // reference starts at source[100], which sits at received[100 + delay].
    expect(result.lagSamples).toBe(100 + delay);
    expect(result.gain).toBe(1);
    expect(result.snrDb).toBeCloseTo(40, 0);
  });

  it('counts a level error as noise unless applyGain is set', () => {
    const received = source.map((v) => 0.5 * v);
    const plain = bestLagSnr(source, received, { maxLagSamples: 0 });
    expect(plain.snrDb).toBeCloseTo(6.02, 1); // error = half the signal
    const scaled = bestLagSnr(source, received, { maxLagSamples: 0, applyGain: true });
    expect(scaled.gain).toBeCloseTo(2, 6);
    expect(scaled.snrDb).toBeGreaterThan(100);
  });

  it('only searches lags where the received signal covers the whole reference', () => {
    expect(() => bestLagSnr(source, source.subarray(0, 3999), { maxLagSamples: 10 })).toThrow(/cannot cover/);
    expect(() => bestLagSnr(new Float64Array(0), source, { maxLagSamples: 10 })).toThrow(AudioError);
  });
});
