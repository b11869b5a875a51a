import { backoffDelayMs } from './backoff-delay';

describe('backoffDelayMs', () => {
  const options = { initialDelayMs: 100, maxDelayMs: 1000 };

  it('doubles per retry with equal jitter: between half and all of the exponential step', () => {
    expect(backoffDelayMs(1, options, undefined, () => 0)).toBe(50);
    expect(backoffDelayMs(1, options, undefined, () => 1)).toBe(100);
    expect(backoffDelayMs(2, options, undefined, () => 0)).toBe(100);
    expect(backoffDelayMs(3, options, undefined, () => 1)).toBe(400);
  });

  it('caps the step at maxDelayMs', () => {
    expect(backoffDelayMs(10, options, undefined, () => 1)).toBe(1000);
  });

  it('never waits less than the server asked for with Retry-After', () => {
    expect(backoffDelayMs(1, options, 750, () => 0)).toBe(750);
    expect(backoffDelayMs(3, options, 10, () => 1)).toBe(400);
  });

  it('spreads retries of calls that failed together', () => {
    const delays = new Set(Array.from({ length: 50 }, () => Math.round(backoffDelayMs(3, options))));
    expect(delays.size).toBeGreaterThan(10);
    for (const delay of delays) expect(delay).toBeGreaterThanOrEqual(200);
  });
});
