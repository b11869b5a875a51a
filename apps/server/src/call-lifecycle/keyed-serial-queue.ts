import { PersistenceError } from '@switchboard/persistence';

/**
 * Runs tasks one at a time per key, in arrival order, in this process. Admission uses it per
 * organization: the admission transaction holds the organization's advisory lock, and without this
 * a burst of calls for one organization would open one transaction per call, each holding a pooled
 * connection while it waits for that lock: the whole pool ends up waiting, and the queries live
 * calls need (stream claims, records) wait behind them. Queued here, a waiting admission holds
 * nothing; across processes the advisory lock still decides.
 */
export class KeyedSerialQueue {
  private readonly tails = new Map<string, Promise<void>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const result = previous.then(task);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }

  /** Keys with a task running or queued (for tests). */
  get activeKeys(): number {
    return this.tails.size;
  }
}

/**
 * Whether work queued at `queuedAt` (performance.now()) waited too long to be started at all: its
 * caller has been answered already (a declined voice webhook). A retryable `unavailable` error, or null.
 */
export function waitedTooLong(queuedAt: number, maxWaitMs: number): PersistenceError | null {
  const waitedMs = performance.now() - queuedAt;
  return waitedMs > maxWaitMs ? new PersistenceError('unavailable', `waited ${Math.round(waitedMs)} ms for the admissions queued before it`, true) : null;
}
