import { magnitudeResponse, measureBands } from './frequency-response';
import { remez } from './remez';

const LOWPASS = [
  { startFrequency: 0, endFrequency: 0.2, gain: 1, weight: 1 },
  { startFrequency: 0.25, endFrequency: 0.5, gain: 0, weight: 10 },
];

describe('remez (Parks-McClellan)', () => {
  it('designs a symmetric equiripple low-pass whose measured ripple equals the reported deviation', () => {
    const { taps, deviation } = remez(61, LOWPASS);
    expect(taps).toHaveLength(61);
    for (let k = 0; k < 30; k++) expect(taps[k]).toBe(taps[60 - k]);
    const figures = measureBands(taps, 1, 0.2, 0.25, 3000);
    // Pass band error <= deviation, stop band <= deviation / weight; equiripple means both are met
    // with equality, to the accuracy of the design grid (about 2%).
    const passError = Math.pow(10, figures.passbandRippleDb / 20) - 1;
    const stopError = Math.pow(10, -figures.stopbandAttenuationDb / 20);
    expect(Math.abs(passError / deviation - 1)).toBeLessThan(0.03);
    expect(Math.abs(stopError / (deviation / 10) - 1)).toBeLessThan(0.03);
    expect(figures.stopbandAttenuationDb).toBeGreaterThan(60);
  });

  it('handles even lengths (type II, zero at Nyquist)', () => {
    const { taps, deviation } = remez(40, LOWPASS);
    expect(magnitudeResponse(taps, 0.5)).toBeLessThan(1e-12);
    expect(Math.abs(magnitudeResponse(taps, 0.1) - 1)).toBeLessThanOrEqual(deviation * 1.03);
  });

  it('gets better with more taps', () => {
    expect(remez(81, LOWPASS).deviation).toBeLessThan(remez(41, LOWPASS).deviation / 10);
  });

  it('rejects malformed bands', () => {
    expect(() => remez(2, LOWPASS)).toThrow(RangeError);
    expect(() => remez(31, [{ startFrequency: 0.3, endFrequency: 0.2, gain: 1, weight: 1 }])).toThrow(/band edges/);
    expect(() => remez(31, [LOWPASS[1]!, LOWPASS[0]!])).toThrow(/ascending/);
    expect(() => remez(31, [])).toThrow(RangeError);
  });
});
