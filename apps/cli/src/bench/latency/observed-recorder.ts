import { InMemoryConversationRecorder, type TurnLatencyRecord } from '@switchboard/conversation';

/**
 * The in-memory recorder, plus a way for the caller script to wait for "the agent finished its
 * Nth reply" (a latency record is written once the reply has been heard to its end), and the
 * call clock's place on performance.now().
 */
export class ObservedRecorder extends InMemoryConversationRecorder {
  /**
   * performance.now() minus the call clock: the session stamps endOfTurnMs just before it records
   * `turn_ended`, so the two differ by microseconds. Lets call-clock milestones be laid over
   * process-wide events (GC pauses).
   */
  callClockToPerfMs: number | undefined;
  private waiters: { count: number; resolve: () => void }[] = [];

  override event(type: string, payload: Record<string, unknown> = {}): void {
    super.event(type, payload);
    if (type === 'turn_ended' && typeof payload.endOfTurnMs === 'number') this.callClockToPerfMs ??= performance.now() - payload.endOfTurnMs;
  }

  override turnLatency(latency: TurnLatencyRecord): void {
    super.turnLatency(latency);
    const ready = this.waiters.filter((waiter) => this.latencies.length >= waiter.count);
    this.waiters = this.waiters.filter((waiter) => this.latencies.length < waiter.count);
    for (const waiter of ready) waiter.resolve();
  }

  /** Resolves once `count` latency records exist; rejects after `timeoutMs`. */
  whenLatencies(count: number, timeoutMs: number): Promise<void> {
    if (this.latencies.length >= count) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((waiter) => waiter.resolve !== done);
        reject(new Error(`no reply ${count} within ${timeoutMs} ms (${this.latencies.length} so far)`));
      }, timeoutMs);
      const done = (): void => {
        clearTimeout(timer);
        resolve();
      };
      this.waiters.push({ count, resolve: done });
    });
  }
}
