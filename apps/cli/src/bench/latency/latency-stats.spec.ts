/** The latency bench's distributions and target checks (nearest-rank percentiles, as the other benches). */
import { allMeasured, atMost, distribution } from './latency-stats';

describe('distribution', () => {
  it('takes nearest-rank percentiles: of 1..100 the p50 is 50, the p95 95, the p99 99', () => {
    const values = Array.from({ length: 100 }, (_, index) => 100 - index);
    expect(distribution(values)).toEqual({ count: 100, p50: 50, p95: 95, p99: 99, max: 100, mean: 50.5 });
  });

  it('lets one slow sample in 100 decide the max but not the p99; two decide the p99', () => {
    const fast = Array.from({ length: 98 }, () => 2);
    expect(distribution([...fast, 2, 40]).p99).toBe(2);
    expect(distribution([...fast, 30, 40]).p99).toBe(30);
    expect(distribution([...fast, 2, 40]).max).toBe(40);
  });

  it('is all NaN, count 0, for no samples', () => {
    expect(distribution([])).toEqual({ count: 0, p50: NaN, p95: NaN, p99: NaN, max: NaN, mean: NaN });
  });
});

describe('targets', () => {
  it('passes a value at the limit, fails one above it, and fails an empty sample', () => {
    expect(atMost('overhead p50', 3, 3)).toEqual({ name: 'overhead p50', value: 3, target: '<= 3 ms', pass: true });
    expect(atMost('overhead p50', 3.01, 3).pass).toBe(false);
    expect(atMost('overhead p50', NaN, 3).pass).toBe(false);
  });

  it('passes "all measured" only when every expected sample is there, and never on nothing', () => {
    expect(allMeasured('replies', 300, 300)).toEqual({ name: 'replies', value: 300, target: '= 300', pass: true });
    expect(allMeasured('replies', 299, 300).pass).toBe(false);
    expect(allMeasured('replies', 0, 0).pass).toBe(false);
  });
});
