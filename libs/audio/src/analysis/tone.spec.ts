import { AudioError } from '../audio-error';
import { rmsDbfs, toneLevelDbfs } from './signal-metrics';
import { sineTone } from './tone';

describe('sineTone', () => {
  it('has the requested level, length and frequency', () => {
    const tone = sineTone({ frequencyHz: 1000, sampleRate: 8000, durationMs: 500, amplitudeDbfs: -10 });
    expect(tone).toHaveLength(4000);
    expect(rmsDbfs(tone)).toBeCloseTo(-10, 2);
    expect(toneLevelDbfs(tone, 1000, 8000)).toBeCloseTo(-10, 1);
    expect(toneLevelDbfs(tone, 1500, 8000)).toBeLessThan(-90);
    // Exactly 8 samples per period at 1 kHz / 8 kHz.
    expect(tone[2]).toBe(Math.round(32767 * Math.pow(10, -10 / 20)));
    expect(tone[8]).toBe(0);
  });

  it('defaults to -6 dBFS and accepts a sample count and phase', () => {
    const tone = sineTone({ frequencyHz: 440, sampleRate: 16000, sampleCount: 16000 });
    expect(rmsDbfs(tone)).toBeCloseTo(-6, 2);
    expect(sineTone({ frequencyHz: 100, sampleRate: 8000, sampleCount: 1, phaseRadians: Math.PI / 2, amplitudeDbfs: 0 })[0]).toBe(32767);
  });

  it('rejects tones it cannot represent', () => {
    expect(() => sineTone({ frequencyHz: 5000, sampleRate: 8000, durationMs: 10 })).toThrow(AudioError);
    expect(() => sineTone({ frequencyHz: 500, sampleRate: 8000, durationMs: 10, amplitudeDbfs: 3 })).toThrow(/<= 0 dBFS/);
    expect(() => sineTone({ frequencyHz: 500, sampleRate: 8000 })).toThrow(/durationMs or sampleCount/);
  });
});
