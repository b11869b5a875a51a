import { SpeechHysteresis } from './speech-hysteresis';

describe('SpeechHysteresis', () => {
  it('starts speech at threshold, keeps the state between the thresholds, ends it below the negative threshold', () => {
    const speech = new SpeechHysteresis({ threshold: 0.5, negativeThreshold: 0.35 });
    const states = [0.4, 0.5, 0.4, 0.36, 0.35, 0.34, 0.45, 0.49, 0.5].map((p) => speech.update(p));
    expect(states).toEqual([false, true, true, true, true, false, false, false, true]);
  });

  it('goes back to silence on reset, so speech must reach the threshold again', () => {
    const speech = new SpeechHysteresis({ threshold: 0.5, negativeThreshold: 0.35 });
    speech.update(0.9);
    speech.reset();
    expect(speech.update(0.45)).toBe(false);
    expect(speech.inSpeech).toBe(false);
  });

  it('puts the default negative threshold 0.15 under the threshold, never at or below zero', () => {
    expect(SpeechHysteresis.defaultNegativeThreshold(0.5)).toBeCloseTo(0.35);
    expect(SpeechHysteresis.defaultNegativeThreshold(0.1)).toBe(0.01);
  });
});
