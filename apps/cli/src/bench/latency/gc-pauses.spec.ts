/** How much of a reply's window GC pauses covered (the bench's attribution of slow replies). */
import { pausedWithin } from './gc-pauses';

describe('pausedWithin', () => {
  const pauses = [
    { startMs: 100, durationMs: 5 },
    { startMs: 110, durationMs: 2 },
    { startMs: 200, durationMs: 10 },
  ];

  it('adds up the parts of pauses inside the window, clipping those that straddle its ends', () => {
    expect(pausedWithin(pauses, 102, 111)).toBe(4);
    expect(pausedWithin(pauses, 0, 1000)).toBe(17);
    expect(pausedWithin(pauses, 205, 206)).toBe(1);
  });

  it('is 0 for a window between pauses or touching one only at an edge', () => {
    expect(pausedWithin(pauses, 120, 200)).toBe(0);
    expect(pausedWithin(pauses, 105, 110)).toBe(0);
    expect(pausedWithin([], 0, 1000)).toBe(0);
  });
});
