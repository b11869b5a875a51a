/**
 * Garbage-collection pauses of this process during a run (performance.now() times), and how much
 * of a time window they covered: one of the ways a loaded event loop turns into a slow reply.
 * Callers and server share the heap here, as they share the CPU.
 */
import { PerformanceObserver } from 'node:perf_hooks';

export interface Pause {
  startMs: number;
  durationMs: number;
}

export class GcPauses {
  readonly pauses: Pause[] = [];
  private readonly observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) this.pauses.push({ startMs: entry.startTime, durationMs: entry.duration });
  });

  start(): void {
    this.observer.observe({ entryTypes: ['gc'] });
  }

  stop(): void {
    this.observer.disconnect();
  }
}

/** Milliseconds of [fromMs, toMs] covered by pauses. */
export function pausedWithin(pauses: readonly Pause[], fromMs: number, toMs: number): number {
  let covered = 0;
  for (const pause of pauses) {
    const overlap = Math.min(toMs, pause.startMs + pause.durationMs) - Math.max(fromMs, pause.startMs);
    if (overlap > 0) covered += overlap;
  }
  return covered;
}
