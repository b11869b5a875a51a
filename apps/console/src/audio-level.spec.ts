import { describe, expect, it } from '@jest/globals';
import { DecayingLevel, levelFraction, levelWord, rmsOfPcm16, SPEAKING_RMS } from './audio-level';

describe("the Talk panel's level meters", () => {
  it('measures PCM16 frames', () => {
    expect(rmsOfPcm16(new Int16Array(320))).toBe(0);
    expect(rmsOfPcm16(new Int16Array([16384, -16384, 16384, -16384]))).toBeCloseTo(0.5, 5);
    expect(rmsOfPcm16(new Int16Array(0))).toBe(0);
  });

  it('fills the bar on a decibel scale, empty at -60 dBFS and full at 0 dBFS', () => {
    expect(levelFraction(0)).toBe(0);
    expect(levelFraction(0.001)).toBeCloseTo(0, 5);
    expect(levelFraction(0.01)).toBeCloseTo(1 / 3, 5);
    expect(levelFraction(1)).toBe(1);
    expect(levelFraction(2)).toBe(1);
  });

  it('jumps up at once and falls back when the sound stops', () => {
    const level = new DecayingLevel(100);
    level.push(0.2, 1000);
    expect(level.read(1000)).toBeCloseTo(0.2, 5);
    expect(level.read(1100)).toBeCloseTo(0.1, 5);
    // A quieter reading does not pull it down faster than it falls...
    level.push(0.05, 1100);
    expect(level.read(1100)).toBeCloseTo(0.1, 5);
    // ...a louder one lifts it at once.
    level.push(0.3, 1150);
    expect(level.read(1150)).toBeCloseTo(0.3, 5);
    // Silence: half a second later it reads quiet.
    expect(levelWord(level.read(1650))).toBe('quiet');
    level.reset();
    expect(level.read(5000)).toBe(0);
  });

  it('calls a voice speaking and a quiet room quiet', () => {
    expect(levelWord(SPEAKING_RMS)).toBe('speaking');
    expect(levelWord(0.002)).toBe('quiet');
  });
});
