import { describe, expect, it } from '@jest/globals';
import { inferenceCapacityText, type InferenceCapacity } from './inference-capacity-text';

const MEASURED: InferenceCapacity = { state: 'measured', workers: 2, maxUtilisation: 0.8, utilisation: 0.42, predictedUtilisation: 0.61, callsHeadroom: 5 };

describe("the Usage page's inference capacity line", () => {
  it('says how busy the workers are, what admission plans for, and how many more calls fit', () => {
    expect(inferenceCapacityText(MEASURED)).toBe('42 % of 2 inference workers busy over the last 30 s, 61 % planned of the 80 % allowed: room for 5 more calls.');
    expect(inferenceCapacityText({ ...MEASURED, callsHeadroom: 1 })).toMatch(/room for 1 more call\.$/);
  });

  it('says so plainly when the next call would be refused for capacity', () => {
    expect(inferenceCapacityText({ ...MEASURED, predictedUtilisation: 0.79, callsHeadroom: 0 })).toBe(
      '42 % of 2 inference workers busy over the last 30 s, 79 % planned of the 80 % allowed: new calls are refused for capacity now.',
    );
  });

  it('says calls are admitted while nothing is measured, while only streaming models run, or before any model ran', () => {
    expect(inferenceCapacityText({ ...MEASURED, state: 'measuring', predictedUtilisation: null, callsHeadroom: null, utilisation: 0.01, workers: 1 })).toBe(
      "1 % of 1 inference worker busy over the last 30 s; no call's cost measured yet on this instance, so calls are admitted.",
    );
    expect(inferenceCapacityText({ ...MEASURED, predictedUtilisation: 0.05, callsHeadroom: null })).toBe(
      '42 % of 2 inference workers busy over the last 30 s, 5 % planned of the 80 % allowed; only streaming models run, so calls are admitted.',
    );
    expect(inferenceCapacityText({ ...MEASURED, state: 'measuring', workers: 0, callsHeadroom: null })).toBe(
      'No local model has run on this instance yet: calls are admitted by the concurrency limit alone.',
    );
  });
});
