import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { isRetryableDatabaseError } from '@switchboard/persistence';
import { CallEndService, type CallEnd } from './call-end.service';

/** First retry after this long; each later one doubles (with full jitter) up to the cap. */
const RETRY_BASE_MS = 250;
const RETRY_MAX_DELAY_MS = 30_000;
/** Failures a retry cannot fix (a bug, not an outage) are tried this many times, then left to the reconciler. */
const MAX_ATTEMPTS_FOR_NON_RETRYABLE = 5;
/** Shutdown waits this long for ends still being retried; the reconciler finishes what is left. */
const SHUTDOWN_GRACE_MS = 5_000;

/**
 * Finalises calls durably: a call's end (end reason, ledger, call.ended) must not be lost because the
 * database was down at the moment the caller hung up, or the call would hold a concurrency slot and
 * stay unpriced for ever. Each end is tried at once, then again with exponential backoff and full
 * jitter while the failure is an outage, until it lands. A process that dies with ends still
 * pending leaves them to the CallReconciler, which finds calls whose media went quiet.
 */
@Injectable()
export class CallEndRetrier implements OnApplicationShutdown {
  private readonly logger = new Logger(CallEndRetrier.name);
  private readonly pending = new Map<string, Promise<void>>();
  private stopping = false;
  private readonly wakeOnStop = new Set<() => void>();

  constructor(private readonly ends: CallEndService) {}

  /** Ends being retried right now (for health and tests). */
  get pendingCount(): number {
    return this.pending.size;
  }

  /**
   * Finalises the call, retrying until it lands; resolves once it has (or been given up). Never
   * rejects. A second end for a call already pending waits for the first (the first reason wins).
   */
  finaliseDurably(callId: string, end: CallEnd): Promise<void> {
    const already = this.pending.get(callId);
    if (already) return already;
    const work = this.attemptUntilStored(callId, end).finally(() => this.pending.delete(callId));
    this.pending.set(callId, work);
    return work;
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopping = true;
    for (const wake of this.wakeOnStop) wake();
    if (this.pending.size === 0) return;
    const settled = Promise.allSettled([...this.pending.values()]);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), SHUTDOWN_GRACE_MS)));
    const outcome = await Promise.race([settled.then(() => 'done' as const), timedOut]);
    clearTimeout(timer);
    if (outcome === 'timeout') this.logger.warn(`${this.pending.size} call end(s) not stored before shutdown; the reconciler will end those calls`);
  }

  private async attemptUntilStored(callId: string, end: CallEnd): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.ends.finalise(callId, end);
        if (attempt > 1) this.logger.log(`call ${callId} finalised after ${attempt} attempts`);
        return;
      } catch (error) {
        const retryable = isRetryableDatabaseError(error) || !isKnownPermanent(error);
        if (!retryable || (!isRetryableDatabaseError(error) && attempt >= MAX_ATTEMPTS_FOR_NON_RETRYABLE)) {
          this.logger.error(`call ${callId} could not be finalised (attempt ${attempt}, giving up): ${describe(error)}`);
          return;
        }
        if (this.stopping && attempt > 1) {
          this.logger.warn(`call ${callId} not finalised before shutdown (${describe(error)}); the reconciler will end it`);
          return;
        }
        const delayMs = Math.random() * Math.min(RETRY_MAX_DELAY_MS, RETRY_BASE_MS * 2 ** (attempt - 1));
        this.logger.warn(`call ${callId} could not be finalised (attempt ${attempt}): ${describe(error)}; retrying in ${Math.round(delayMs)} ms`);
        await this.sleep(delayMs);
      }
    }
  }

  /** A wait that shutdown cuts short, so the last attempt happens before the pool closes. */
  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.wakeOnStop.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.wakeOnStop.add(wake);
    });
  }
}

/** Errors the persistence layer raised on purpose and marked as not worth retrying (bad input, a missing row). */
function isKnownPermanent(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { name?: unknown }).name === 'PersistenceError' && (error as { retryable?: unknown }).retryable === false;
}

/** One line: Prisma's messages start with blank lines and a code frame. */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const lines = error.message.split('\n').map((line) => line.trim()).filter((line) => line.length > 0);
  return lines[lines.length - 1] ?? error.name;
}
