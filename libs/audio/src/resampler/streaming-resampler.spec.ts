import { AudioError } from '../audio-error';
import { rmsDbfs } from '../analysis/signal-metrics';
import { sineTone } from '../analysis/tone';
import { StreamingResampler } from './streaming-resampler';
import { CONVERSIONS, KERNELS, resampleInChunks } from '@switchboard/testing';

/** Band-limited test signal with some noise: exercises every tap, not just one frequency. */
function testSignal(sampleRate: number, durationMs: number): Int16Array {
  const length = Math.round((sampleRate * durationMs) / 1000);
  const signal = new Int16Array(length);
  let state = 99;
  for (let i = 0; i < length; i++) {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    const t = i / sampleRate;
    signal[i] = Math.round(6000 * Math.sin(2 * Math.PI * 440 * t) + 3000 * Math.sin(2 * Math.PI * 2900 * t) + (state / 0x7fffffff - 0.5) * 4000);
  }
  return signal;
}

const label = ([input, output]: readonly [number, number]): string => `${input} -> ${output}`;

describe.each(KERNELS)('StreamingResampler (%s kernel)', (kernel) => {
  describe.each(CONVERSIONS.map((c) => [label(c), c] as const))('%s', (_name, [inputRate, outputRate]) => {
    const input = testSignal(inputRate, 300);
    const frame = (inputRate * 20) / 1000;

    it('gives bit-identical output in 20 ms frames, odd-sized chunks and one go', () => {
      const resampler = new StreamingResampler({ inputRate, outputRate, kernel });
      const oneGo = resampleInChunks(resampler, input, [input.length]);
      const frames = resampleInChunks(resampler, input, [frame]);
      const odd = resampleInChunks(resampler, input, [1, 7, 333, 2, frame + 1, 0, 64]);
      expect(frames.length).toBe(oneGo.length);
      expect(odd.length).toBe(oneGo.length);
      expect(Buffer.from(frames.buffer).equals(Buffer.from(oneGo.buffer))).toBe(true);
      expect(Buffer.from(odd.buffer).equals(Buffer.from(oneGo.buffer))).toBe(true);
    });

    it('reports its group delay, and an impulse comes out exactly there', () => {
      const resampler = new StreamingResampler({ inputRate, outputRate, kernel });
      expect(resampler.delayOutputSamples).toBe(Math.round(resampler.delayOutputSamples));
      expect(resampler.delayMs).toBeCloseTo((resampler.delayOutputSamples * 1000) / outputRate, 9);
      expect(resampler.delayInputSamples).toBeCloseTo((resampler.delayMs * inputRate) / 1000, 6);
      // An impulse at an input sample that falls on the output grid: its response is symmetric
      // around the reported delay, so its centroid (a band-limited sum) lands on it.
      const at = (inputRate / gcd(inputRate, outputRate)) * 2;
      const impulse = new Int16Array(inputRate / 10);
      impulse[at] = 30000;
      const response = resampleInChunks(resampler, impulse, [frame]);
      let weight = 0;
      let moment = 0;
      response.forEach((value, index) => {
        weight += value;
        moment += index * value;
      });
      const expected = (at * outputRate) / inputRate + resampler.delayOutputSamples;
      expect(Math.abs(moment / weight - expected)).toBeLessThan(0.02);
    });

    it('predicts output lengths exactly and flush() ends on the last input sample', () => {
      const resampler = new StreamingResampler({ inputRate, outputRate, kernel });
      let total = 0;
      for (const size of [frame, 1, 0, 999, frame]) {
        const expected = resampler.outputLengthFor(size);
        const got = resampler.process(input.subarray(0, size)).length;
        expect(got).toBe(expected);
        total += got;
      }
      const inputs = 2 * frame + 1000;
      total += resampler.flush().length;
      expect(total).toBe(Math.floor(((inputs - 1) * outputRate) / inputRate) + 1 + resampler.delayOutputSamples);
    });
  });

  it('keeps state across frames: a tone split at frame boundaries has no seams', () => {
    const tone = sineTone({ frequencyHz: 1000, sampleRate: 8000, durationMs: 200, amplitudeDbfs: -3 });
    const resampler = new StreamingResampler({ inputRate: 8000, outputRate: 16000, kernel });
    const out = resampleInChunks(resampler, tone, [160], false);
    const delay = resampler.delayOutputSamples;
    // Compare with the ideal 16 kHz tone, delayed: the worst error anywhere (frame seams included)
    // is a few LSB of rounding, never a click.
    let worst = 0;
    for (let i = delay + 64; i < out.length; i++) {
      const ideal = 32767 * Math.pow(10, -3 / 20) * Math.sin((2 * Math.PI * 1000 * (i - delay)) / 16000);
      worst = Math.max(worst, Math.abs(out[i]! - ideal));
    }
    expect(worst).toBeLessThan(4);
  });

  it('reuses its output view while frame lengths repeat (no allocation per frame)', () => {
    const resampler = new StreamingResampler({ inputRate: 16000, outputRate: 8000, kernel });
    const frame = new Int16Array(320);
    resampler.process(frame);
    const first = resampler.process(frame);
    expect(resampler.process(frame)).toBe(first);
    expect(first).toHaveLength(160);
  });

  it('processInto writes into a caller array and checks its size', () => {
    const resampler = new StreamingResampler({ inputRate: 8000, outputRate: 24000, kernel });
    const reference = new StreamingResampler({ inputRate: 8000, outputRate: 24000, kernel });
    const input = testSignal(8000, 20);
    const out = new Int16Array(480);
    expect(resampler.processInto(input, out)).toBe(reference.outputLengthFor(160));
    const count = reference.outputLengthFor(160);
    expect(out.subarray(0, count)).toEqual(reference.process(input));
    expect(() => resampler.processInto(input, new Int16Array(10))).toThrow(AudioError);
  });

  it('reset() starts a new stream: the same input gives the same output again', () => {
    const resampler = new StreamingResampler({ inputRate: 24000, outputRate: 8000, kernel });
    const input = testSignal(24000, 60);
    const first = resampler.process(input).slice();
    resampler.process(testSignal(24000, 40));
    resampler.reset();
    expect(resampler.process(input)).toEqual(first);
  });

  it('saturates instead of wrapping on full-scale input', () => {
    const square = Int16Array.from({ length: 1600 }, (_, i) => (Math.floor(i / 20) % 2 === 0 ? 32767 : -32768));
    const out = new StreamingResampler({ inputRate: 8000, outputRate: 16000, kernel }).process(square);
    // The filter overshoots (Gibbs); clipped values pin at the rails, and no sign flips appear
    // in the middle of a half-period.
    expect(Math.max(...out)).toBe(32767);
    expect(Math.min(...out)).toBe(-32768);
    for (let i = 200; i < out.length - 40; i++) {
      const phase = (i - 200) % 80;
      if (phase > 15 && phase < 25) expect(out[i]!).toBeGreaterThan(20000);
    }
  });

  it('passes audio through untouched when the rates are equal', () => {
    const resampler = new StreamingResampler({ inputRate: 16000, outputRate: 16000, kernel });
    const input = testSignal(16000, 20);
    expect(resampler.process(input)).toEqual(input);
    expect(resampler.delayMs).toBe(0);
    expect(resampler.flush()).toHaveLength(0);
  });

  it('flush() of an empty stream returns nothing', () => {
    expect(new StreamingResampler({ inputRate: 8000, outputRate: 16000, kernel }).flush()).toHaveLength(0);
  });

  it('refuses invalid rates and qualities with a non-retryable error', () => {
    for (const options of [
      { inputRate: 0, outputRate: 8000 },
      { inputRate: 8000.5, outputRate: 8000 },
      { inputRate: 8000, outputRate: -1 },
      { inputRate: 8000, outputRate: 1e9 },
    ]) {
      expect(() => new StreamingResampler(options)).toThrow(expect.objectContaining({ code: 'invalid_sample_rate', retryable: false }));
    }
    expect(() => new StreamingResampler({ inputRate: 8000, outputRate: 16000, quality: 'best' as never })).toThrow(AudioError);
    // 44100 -> 47999 would need 47999 polyphase branches.
    expect(() => new StreamingResampler({ inputRate: 44100, outputRate: 47999, kernel })).toThrow(/polyphase branches/);
  });

  it("offers a 'high' quality: deeper stop band for a longer delay", () => {
    const telephony = new StreamingResampler({ inputRate: 16000, outputRate: 8000, kernel });
    const high = new StreamingResampler({ inputRate: 16000, outputRate: 8000, quality: 'high', kernel });
    expect(high.delayMs).toBeGreaterThan(telephony.delayMs);
    // A full-scale tone just above the output Nyquist frequency: telephony lets ~-85 dBFS of alias
    // through, 'high' nothing measurable above the output's rounding noise.
    const tone = sineTone({ frequencyHz: 4150, sampleRate: 16000, durationMs: 200, amplitudeDbfs: -1 });
    const aliasOf = (resampler: StreamingResampler): number => rmsDbfs(resampler.process(tone), 400);
    expect(aliasOf(telephony)).toBeLessThan(-80);
    expect(aliasOf(high)).toBeLessThan(-95);
  });
});

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}
