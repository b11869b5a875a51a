import { ResponseTracker } from './response-tracker';

describe('ResponseTracker', () => {
  it('times a response from the end of caller speech to first audio and to done', () => {
    const tracker = new ResponseTracker();
    tracker.speechStopped(1000);
    tracker.created('r1', 1100);
    tracker.audioArrived('r1', 1250);
    tracker.audioArrived('r1', 1300);
    expect(tracker.done('r1', 1900)).toEqual({ firstResultMs: 250, totalMs: 900 });
  });

  it('times an explicitly requested response from the request', () => {
    const tracker = new ResponseTracker();
    tracker.requested(50);
    tracker.created('r1', 60);
    tracker.audioArrived('r1', 90);
    expect(tracker.done('r1', 100)).toEqual({ firstResultMs: 40, totalMs: 50 });
  });

  it('forgets an end of speech the caller talked past (speech started again)', () => {
    const tracker = new ResponseTracker();
    tracker.speechStopped(0);
    tracker.speechStarted();
    tracker.created('r1', 500);
    expect(tracker.done('r1', 700)).toEqual({ totalMs: 200 });
  });

  it('cancels the active response and keeps recognising it after done', () => {
    const tracker = new ResponseTracker();
    tracker.created('r1', 0);
    expect(tracker.cancelActive()).toBe('r1');
    expect(tracker.isCancelled('r1')).toBe(true);
    expect(tracker.cancelActive()).toBeUndefined();
    tracker.done('r1', 10);
    expect(tracker.isCancelled('r1')).toBe(true);
    tracker.created('r2', 20);
    expect(tracker.isCancelled('r2')).toBe(false);
  });

  it('cancels a requested response before the server announces it', () => {
    const tracker = new ResponseTracker();
    tracker.requested(0);
    expect(tracker.cancelActive()).toBe('');
    tracker.created('r1', 5);
    expect(tracker.isCancelled('r1')).toBe(true);
    tracker.requested(10);
    tracker.created('r2', 15);
    expect(tracker.isCancelled('r2')).toBe(false);
  });

  it('remembers a bounded number of cancelled responses', () => {
    const tracker = new ResponseTracker();
    for (let i = 0; i < 40; i += 1) {
      tracker.created(`r${i}`, i);
      tracker.cancelActive();
      tracker.done(`r${i}`, i);
    }
    expect(tracker.isCancelled('r39')).toBe(true);
    expect(tracker.isCancelled('r0')).toBe(false);
  });
});
