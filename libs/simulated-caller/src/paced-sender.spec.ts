import { FakeScheduler } from '@switchboard/testing';
import { PacedSender, PacedTick } from './paced-sender';

describe('PacedSender', () => {
  it('keeps absolute deadlines when every timer fires late (no drift accumulates)', () => {
    // Each wake-up comes 7 ms late. setInterval-style pacing would need 27 ms per frame,
    // so 1 s would carry only 37 frames; absolute deadlines keep it at 50.
    const scheduler = new FakeScheduler(1000, () => 7);
    const sender = new PacedSender({ intervalMs: 20, scheduler });
    const ticks: PacedTick[] = [];
    sender.start((tick) => ticks.push(tick), 1000);

    scheduler.runUntil(2000 + 7);
    expect(ticks).toHaveLength(50);
    ticks.forEach((tick, index) => {
      expect(tick.index).toBe(index);
      expect(tick.deadlineMs).toBe(1000 + (index + 1) * 20);
      expect(tick.lateMs).toBe(7);
    });
    expect(sender.maxLateMs).toBe(7);
    sender.stop();
  });

  it('never fires a tick before its deadline, whatever the jitter', () => {
    const jitterMs = [0, 13, 2, 19, 5, 0, 17, 1];
    const scheduler = new FakeScheduler(0, (timer) => jitterMs[timer % jitterMs.length] ?? 0);
    const sender = new PacedSender({ intervalMs: 20, scheduler });
    const firedAt: { deadlineMs: number; nowMs: number }[] = [];
    sender.start((tick) => firedAt.push({ deadlineMs: tick.deadlineMs, nowMs: scheduler.nowMs() }), 0);
    scheduler.runUntil(10_000);
    sender.stop();

    expect(firedAt.length).toBeGreaterThanOrEqual(499);
    expect(firedAt.length).toBeLessThanOrEqual(500);
    firedAt.forEach(({ deadlineMs, nowMs }, index) => {
      expect(deadlineMs).toBe((index + 1) * 20);
      expect(nowMs).toBeGreaterThanOrEqual(deadlineMs);
      expect(nowMs - deadlineMs).toBeLessThan(20 + 19);
    });
  });

  it('catches up after an event-loop stall by sending the overdue ticks back to back', () => {
    const scheduler = new FakeScheduler(0);
    const sender = new PacedSender({ intervalMs: 20, scheduler });
    const ticks: PacedTick[] = [];
    sender.start((tick) => ticks.push(tick), 0);
    scheduler.runUntil(40);
    expect(ticks.map((tick) => tick.index)).toEqual([0, 1]);

    scheduler.stall(100); // now 140: ticks due at 60, 80, 100, 120, 140 are overdue
    scheduler.runUntil(140);
    expect(ticks.slice(2).map((tick) => tick.lateMs)).toEqual([80, 60, 40, 20, 0]);
    expect(sender.maxLateMs).toBe(80);
    scheduler.runUntil(160);
    expect(ticks).toHaveLength(8);
    expect(ticks[7]?.lateMs).toBe(0);
    sender.stop();
  });

  it('stop() cancels the pending timer and no tick fires afterwards', () => {
    const scheduler = new FakeScheduler(0);
    const sender = new PacedSender({ intervalMs: 20, scheduler });
    let count = 0;
    sender.start(() => (count += 1), 0);
    scheduler.runUntil(60);
    sender.stop();
    expect(scheduler.pendingTimers).toBe(0);
    scheduler.runUntil(1000);
    expect(count).toBe(3);
    expect(sender.isRunning).toBe(false);
  });

  it('stops and reports when a tick handler throws, instead of spinning', () => {
    const scheduler = new FakeScheduler(0);
    const errors: unknown[] = [];
    const sender = new PacedSender({ intervalMs: 20, scheduler, onError: (error) => errors.push(error) });
    sender.start((tick) => {
      if (tick.index === 1) throw new Error('boom');
    }, 0);
    scheduler.runUntil(200);
    expect(errors).toEqual([new Error('boom')]);
    expect(sender.isRunning).toBe(false);
    expect(sender.ticksFired).toBe(2);
  });

  it('rejects a non-positive interval', () => {
    expect(() => new PacedSender({ intervalMs: 0 })).toThrow(RangeError);
  });
});
