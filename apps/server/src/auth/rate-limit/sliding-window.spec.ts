import { decide, estimateHits, windowStartOf } from './sliding-window';

const W = 60_000;
const START = 1_700_000_040_000; // a multiple of W

describe('sliding window counter', () => {
  it('aligns windows to multiples of their length', () => {
    expect(START % W).toBe(0);
    expect(windowStartOf(START, W)).toBe(START);
    expect(windowStartOf(START + W - 1, W)).toBe(START);
    expect(windowStartOf(START + W, W)).toBe(START + W);
  });

  it('weighs the previous window by the part of it still inside the sliding window', () => {
    expect(estimateHits(10, 3, 0)).toBe(13);
    expect(estimateHits(10, 3, 0.25)).toBe(10.5);
    expect(estimateHits(10, 3, 1)).toBe(3);
  });

  it('allows up to the limit, then refuses, counting down what remains', () => {
    const at = (currentHits: number) => decide({ limit: 5, windowMs: W, nowMs: START + 1_000, currentHits, previousHits: 0 });
    expect([1, 2, 3, 4, 5].map((hits) => at(hits).remaining)).toEqual([4, 3, 2, 1, 0]);
    expect([1, 2, 3, 4, 5].every((hits) => at(hits).allowed && at(hits).retryAfterSeconds === undefined)).toBe(true);
    expect(at(5).resetSeconds).toBe(59);
    expect(at(6)).toMatchObject({ allowed: false, remaining: 0 });
  });

  it('refuses a burst that fixed windows would let through at the boundary', () => {
    // 100 hits late in the previous window, 3 s into this one: 95 of them still count.
    const decision = decide({ limit: 100, windowMs: W, nowMs: START + 3_000, currentHits: 6, previousHits: 100 });
    expect(decision.estimatedHits).toBeCloseTo(101);
    expect(decision.allowed).toBe(false);
  });

  it('tells a refused client when, within this window, the previous window has decayed enough', () => {
    // limit 10, 4 hits now (this one included), 20 before, 30 s in: 20 * 0.5 + 4 = 14 > 10.
    // The next request (5th) fits once 20 * (1 - f) <= 5, i.e. f = 0.75: 15 s from now.
    const decision = decide({ limit: 10, windowMs: W, nowMs: START + 30_000, currentHits: 4, previousHits: 20 });
    expect(decision).toMatchObject({ allowed: false, retryAfterSeconds: 15, resetSeconds: 30 });
    const then = decide({ limit: 10, windowMs: W, nowMs: START + 45_000, currentHits: 5, previousHits: 20 });
    expect(then.allowed).toBe(true);
  });

  it('tells a client over the limit within this window to wait into the next one', () => {
    // limit 5, 6 hits 1 s in: next window holds 6 as previous; 6 * (1 - f) + 1 <= 5 at f = 1/3.
    const decision = decide({ limit: 5, windowMs: W, nowMs: START + 1_000, currentHits: 6, previousHits: 0 });
    expect(decision.retryAfterSeconds).toBe(59 + 20);
    expect(decision.resetSeconds).toBe(79);
    expect(decide({ limit: 5, windowMs: W, nowMs: START + W + 20_000, currentHits: 1, previousHits: 6 }).allowed).toBe(true);
    expect(decide({ limit: 5, windowMs: W, nowMs: START + W + 19_000, currentHits: 1, previousHits: 6 }).allowed).toBe(false);
  });

  it('never answers a Retry-After below 1 s, and waits out two windows at a limit of 1', () => {
    // 10 ms before the window ends the previous window still weighs in; the next one starts clean enough.
    const late = decide({ limit: 5, windowMs: W, nowMs: START + W - 10, currentHits: 4, previousHits: 100_000 });
    expect(late.allowed).toBe(false);
    expect(late.retryAfterSeconds).toBe(1);
    const single = decide({ limit: 1, windowMs: W, nowMs: START, currentHits: 2, previousHits: 0 });
    expect(single.retryAfterSeconds).toBe(120);
  });
});
