import type { EngineError, EngineTimings } from '../contracts';
import { RemoteAbortReason, remoteAbortReasonOf } from './remote-abort';

/**
 * One logical request to a remote engine (one transcript, one LLM reply, one synthesis), across
 * all its attempts: owns the caller's cancellation, the total deadline and the timings every
 * engine reports.
 */
export class RemoteOperation {
  readonly signal: AbortSignal;
  /** Attempts started so far, the successful one included. */
  attempts = 0;
  /** The most recent attempt's failure, quoted when the operation finally gives up. */
  lastError: EngineError | undefined;
  private readonly controller = new AbortController();
  private readonly startedAtMs = performance.now();
  private firstResultMs: number | undefined;
  private readonly totalTimer: NodeJS.Timeout;
  private readonly onCallerAbort = () => this.controller.abort(RemoteAbortReason.cancelled());

  constructor(
    readonly engine: string,
    totalTimeoutMs: number,
    private readonly callerSignal?: AbortSignal,
  ) {
    this.signal = this.controller.signal;
    this.totalTimer = setTimeout(() => this.controller.abort(RemoteAbortReason.timeout('total', totalTimeoutMs)), totalTimeoutMs);
    if (callerSignal?.aborted) this.onCallerAbort();
    else callerSignal?.addEventListener('abort', this.onCallerAbort, { once: true });
  }

  elapsedMs(): number {
    return performance.now() - this.startedAtMs;
  }

  /** First token / first audio / transcript: the first call wins. */
  markFirstResult(): void {
    this.firstResultMs ??= this.elapsedMs();
  }

  timings(): EngineTimings {
    return { totalMs: this.elapsedMs(), firstResultMs: this.firstResultMs, attempts: this.attempts };
  }

  /** The error for an aborted operation (caller cancel or total deadline), else undefined. */
  abortError(): EngineError | undefined {
    return remoteAbortReasonOf(this.signal)?.toEngineError(this.engine, this.lastError);
  }

  /** Resolves when the operation is aborted; used to stop waiting on a retry backoff. */
  whenAborted(): Promise<void> {
    if (this.signal.aborted) return Promise.resolve();
    return new Promise((resolve) => this.signal.addEventListener('abort', () => resolve(), { once: true }));
  }

  cancel(): void {
    this.onCallerAbort();
  }

  /** Stops the timers; call once the operation finished, failed or was cancelled. */
  dispose(): void {
    clearTimeout(this.totalTimer);
    this.callerSignal?.removeEventListener('abort', this.onCallerAbort);
  }
}
