import { nextStateAfterFailure, retryDelayCeilingMs, type RetrySchedule } from './webhook-retry-schedule';

describe('webhook retry schedule', () => {
  const schedule: RetrySchedule = { baseMs: 5_000, maxDelayMs: 3_600_000 };
  const now = new Date('2030-01-01T00:00:00.000Z');
  const farAway = new Date(now.getTime() + 86_400_000);

  it('doubles the ceiling per attempt from the base, never decreasing, and stops at the cap', () => {
    const ceilings = Array.from({ length: 40 }, (_, index) => retryDelayCeilingMs(index + 1, schedule));
    expect(ceilings.slice(0, 4)).toEqual([5_000, 10_000, 20_000, 40_000]);
    for (let index = 1; index < ceilings.length; index++) expect(ceilings[index]!).toBeGreaterThanOrEqual(ceilings[index - 1]!);
    expect(Math.max(...ceilings)).toBe(schedule.maxDelayMs);
    expect(ceilings[ceilings.length - 1]).toBe(schedule.maxDelayMs);
    // Absurd attempt numbers (2^N overflows to Infinity) still give the cap.
    expect(retryDelayCeilingMs(5_000, schedule)).toBe(schedule.maxDelayMs);
  });

  it('draws the delay uniformly between 0 and the ceiling (full jitter)', () => {
    const at = (random: number, attemptNumber = 3) =>
      nextStateAfterFailure({ attemptNumber, now, giveUpAfter: farAway, schedule, random: () => random });
    expect(at(0)).toEqual({ status: 'pending', nextAttemptAt: now });
    expect(at(0.5)).toEqual({ status: 'pending', nextAttemptAt: new Date(now.getTime() + 10_000) });
    expect(at(0.999_999)).toEqual({ status: 'pending', nextAttemptAt: new Date(now.getTime() + 19_999) });
    for (let draw = 0; draw < 200; draw++) {
      const state = nextStateAfterFailure({ attemptNumber: 20, now, giveUpAfter: farAway, schedule });
      if (state.status !== 'pending') throw new Error('expected a retry');
      const delay = state.nextAttemptAt.getTime() - now.getTime();
      expect(delay).toBeGreaterThanOrEqual(0);
      expect(delay).toBeLessThan(schedule.maxDelayMs);
    }
  });

  it('never schedules past giveUpAfter: the last retry is at that moment at the latest', () => {
    const giveUpAfter = new Date(now.getTime() + 1_000);
    const state = nextStateAfterFailure({ attemptNumber: 10, now, giveUpAfter, schedule, random: () => 0.9 });
    expect(state).toEqual({ status: 'pending', nextAttemptAt: giveUpAfter });
  });

  it('marks the delivery failed once an attempt fails at or after giveUpAfter', () => {
    expect(nextStateAfterFailure({ attemptNumber: 30, now, giveUpAfter: now, schedule })).toEqual({ status: 'failed' });
    const past = new Date(now.getTime() - 1);
    expect(nextStateAfterFailure({ attemptNumber: 1, now, giveUpAfter: past, schedule, random: () => 0 })).toEqual({ status: 'failed' });
  });
});
