/**
 * Garbage-collection pauses of the calling thread during a run (its performance.now() times), and
 * how much of a time window they covered: one of the ways a loaded event loop turns into a slow
 * reply. Each thread has its own heap and sees only its own pauses: the server's thread and the
 * caller thread are measured apart.
 */
import { PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';

export interface Pause {
  startMs: number;
  durationMs: number;
}

export class GcPauses {
  readonly pauses: Pause[] = [];
  private readonly observer = new PerformanceObserver((list) => this.record(list.getEntries()));

  start(): void {
    this.observer.observe({ entryTypes: ['gc'] });
  }

  stop(): void {
    // Entries are delivered to the callback asynchronously; take the ones still queued, or the
    // last pauses of the run would be lost with the disconnect.
    this.record(this.observer.takeRecords());
    this.observer.disconnect();
  }

  private record(entries: readonly PerformanceEntry[]): void {
    for (const entry of entries) this.pauses.push({ startMs: entry.startTime, durationMs: entry.duration });
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
