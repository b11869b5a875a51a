import { amountMicros, formatMicros, startedUnits, sumIntegers } from './money';

describe('amountMicros', () => {
  it('prices quantity × unit price / unit size exactly', () => {
    // 1_000 tokens at 150_000 µ$ per 1M tokens = 150_000_000 / 1_000_000 = 150 µ$.
    expect(amountMicros(1_000, 150_000, 1_000_000)).toBe(150);
    // 2 minutes at 8_500 µ$ per minute = 17_000 µ$.
    expect(amountMicros(2, 8_500, 1)).toBe(17_000);
    expect(amountMicros(0, 8_500, 1)).toBe(0);
  });

  it('rounds half up to a whole µ$', () => {
    expect(amountMicros(1, 150_000, 1_000_000)).toBe(0); // 0.15 -> 0
    expect(amountMicros(4, 100_000, 1_000_000)).toBe(0); // 0.4 -> 0
    expect(amountMicros(5, 100_000, 1_000_000)).toBe(1); // 0.5 -> 1
    expect(amountMicros(15, 100_000, 1_000_000)).toBe(2); // 1.5 -> 2
    expect(amountMicros(3_000, 694, 1_000_000)).toBe(2); // 2.082 -> 2
    expect(amountMicros(1, 2, 3)).toBe(1); // 0.666… -> 1
  });

  it('stays exact where float arithmetic would not', () => {
    // 9e12 × 1e6 = 9e18, far past 2^53; / 1e6 = 9e12 exactly.
    expect(amountMicros(9e12, 1e6, 1e6)).toBe(9e12);
    // 5_000_000_000_000_003 × 3 = 15_000_000_000_000_009 (not a double); / 2 = 7_500_000_000_000_004.5 -> …005.
    // In doubles the product rounds to …008 and the result comes out as …004.
    expect(amountMicros(5_000_000_000_000_003, 3, 2)).toBe(7_500_000_000_000_005);
  });

  it('rejects floats, negatives, a non-positive unit size and results past the safe range', () => {
    expect(() => amountMicros(1.5, 100, 1)).toThrow(RangeError);
    expect(() => amountMicros(1, 0.5, 1)).toThrow(RangeError);
    expect(() => amountMicros(1, 100, 1.5)).toThrow(RangeError);
    expect(() => amountMicros(-1, 100, 1)).toThrow(RangeError);
    expect(() => amountMicros(1, -100, 1)).toThrow(RangeError);
    expect(() => amountMicros(1, 100, 0)).toThrow(RangeError);
    expect(() => amountMicros(Number.NaN, 100, 1)).toThrow(RangeError);
    expect(() => amountMicros(Number.POSITIVE_INFINITY, 100, 1)).toThrow(RangeError);
    expect(() => amountMicros(2 ** 53, 1, 1)).toThrow(RangeError);
    expect(() => amountMicros(Number.MAX_SAFE_INTEGER, 2, 1)).toThrow(RangeError);
  });
});

describe('startedUnits', () => {
  it('counts started units', () => {
    expect(startedUnits(61, 60)).toBe(2);
    expect(startedUnits(60, 60)).toBe(1);
    expect(startedUnits(1, 60)).toBe(1);
    expect(startedUnits(0, 60)).toBe(0);
    expect(startedUnits(Number.MAX_SAFE_INTEGER, 1)).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('rejects negatives and fractions', () => {
    expect(() => startedUnits(-1, 60)).toThrow(RangeError);
    expect(() => startedUnits(1.5, 60)).toThrow(RangeError);
    expect(() => startedUnits(1, 0)).toThrow(RangeError);
  });
});

describe('sumIntegers', () => {
  it('sums exactly, negatives included', () => {
    expect(sumIntegers([17_000, -8_500, 8_500])).toBe(17_000);
    expect(sumIntegers([])).toBe(0);
    expect(sumIntegers([Number.MAX_SAFE_INTEGER, -1, 1])).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('rejects fractions and sums past the safe range', () => {
    expect(() => sumIntegers([0.5])).toThrow(RangeError);
    expect(() => sumIntegers([Number.MAX_SAFE_INTEGER, 1])).toThrow(RangeError);
  });
});

describe('formatMicros', () => {
  it.each([
    [1_234_567, '1.234567'],
    [-5, '-0.000005'],
    [0, '0.000000'],
    [-0, '0.000000'],
    [1_000_000, '1.000000'],
    [-1_500_000, '-1.500000'],
    [17_000, '0.017000'],
    [Number.MAX_SAFE_INTEGER, '9007199254.740991'],
  ])('formats %p µ$ as %p', (micros, text) => {
    expect(formatMicros(micros)).toBe(text);
  });

  it('rejects non-integers', () => {
    expect(() => formatMicros(0.5)).toThrow(RangeError);
    expect(() => formatMicros(Number.NaN)).toThrow(RangeError);
  });
});
