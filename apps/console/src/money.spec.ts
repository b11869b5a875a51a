import { describe, expect, it } from '@jest/globals';
import { formatLineAmount, formatMicros, formatPrecise, formatTotal, microsOf } from './money';

describe('money in the console', () => {
  it('reads the API’s exact decimal strings as integer micro-units', () => {
    expect(microsOf('0.017000')).toBe(17_000);
    expect(microsOf('12')).toBe(12_000_000);
    expect(microsOf('-1.5')).toBe(-1_500_000);
    expect(microsOf('0.0000015')).toBe(1); // past six decimals is cut, never a float's guess
    expect(microsOf('abc')).toBeNaN();
  });

  it('rounds half away from zero on integers', () => {
    expect(formatMicros(12_345, 2)).toBe('0.01');
    expect(formatMicros(15_000, 2)).toBe('0.02');
    expect(formatMicros(-15_000, 2)).toBe('-0.02');
    expect(formatMicros(1_999_999, 2)).toBe('2.00');
    expect(formatMicros(3_000_000, 0)).toBe('3');
  });

  it('shows totals in cents, and says "< 0.01" rather than making a cheap call look free', () => {
    expect(formatTotal(1_234_567, 'USD')).toBe('1.23 USD');
    expect(formatTotal(0, 'USD')).toBe('0.00 USD');
    expect(formatTotal(3_120)).toBe('< 0.01');
    expect(formatTotal(-3_120, 'EUR')).toBe('> -0.01 EUR');
  });

  it('shows prices with two to four decimals, and a sub-cent price exactly when four would change it', () => {
    expect(formatPrecise(8_500)).toBe('0.0085'); // per minute
    expect(formatPrecise(20_000)).toBe('0.02');
    expect(formatPrecise(2_500_000)).toBe('2.50'); // per 1M tokens
    expect(formatPrecise(13_000)).toBe('0.013');
    expect(formatPrecise(123_456)).toBe('0.1235');
    expect(formatPrecise(150)).toBe('0.00015'); // per second
    expect(formatPrecise(-4_000)).toBe('-0.004'); // a correction line
  });

  it("shows a ledger line's amount to four decimals, and a few millionths as such rather than as nothing", () => {
    expect(formatLineAmount(216)).toBe('0.0002');
    expect(formatLineAmount(12_345)).toBe('0.0123');
    expect(formatLineAmount(6)).toBe('< 0.0001');
    expect(formatLineAmount(-6)).toBe('> -0.0001');
    expect(formatLineAmount(0)).toBe('0.0000');
  });
});
