import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@switchboard/config';
import { CallAnalysisRepository, CostLedger, TransactionRunner, WebhookOutbox, type AnalysisResult, type ClaimedAnalysis, type InputJsonValue } from '@switchboard/persistence';
import { PinoLogger } from 'nestjs-pino';
import { CallAnalysisRunner, PermanentAnalysisError } from './call-analysis.runner';
import { callAnalysisView } from './call-analysis-view';

/** Analyses one process runs at once (each is one or two LLM requests). */
const CONCURRENT_ANALYSES = 4;
/** A claimed job is someone else's to take after this (its worker died): above two requests' timeouts. */
const LEASE_MS = 5 * 60_000;
/** Attempts before an analysis is marked failed (an LLM down for the whole backoff, a key that is refused). */
export const MAX_ANALYSIS_ATTEMPTS = 5;
const RETRY_BASE_MS = 15_000;
const RETRY_MAX_MS = 15 * 60_000;

/**
 * Runs queued post-call analyses. The queue is the call_analyses table (the outbox pattern the
 * webhooks use, for the same reasons: the job commits with the call's end, there is no second store
 * to lose it between, the embedded database needs no Redis, and SKIP LOCKED lets every process work
 * without taking the same job). Claimed jobs hold a lease; a process that dies mid-analysis leaves
 * its job to be taken again when the lease ends. Results are stored with their ledger lines and the
 * call.analyzed webhook in one transaction.
 */
@Injectable()
export class CallAnalysisWorker implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer: NodeJS.Timeout | undefined;
  private readonly running = new Set<Promise<void>>();
  private polling = false;
  private stopped = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly analyses: CallAnalysisRepository,
    private readonly runner: CallAnalysisRunner,
    private readonly transactions: TransactionRunner,
    private readonly ledger: CostLedger,
    private readonly outbox: WebhookOutbox,
    private readonly logger: PinoLogger,
  ) {
    this.logger.setContext(CallAnalysisWorker.name);
  }

  onApplicationBootstrap(): void {
    if (!this.config.analysis.workerEnabled) return;
    this.timer = setInterval(() => void this.poll(), this.config.analysis.pollIntervalMs);
    this.timer.unref();
  }

  /** Claims what is due (up to the free slots) and starts it; returns the jobs started. */
  async poll(): Promise<number> {
    if (this.polling || this.stopped) return 0;
    const free = CONCURRENT_ANALYSES - this.running.size;
    if (free <= 0) return 0;
    this.polling = true;
    try {
      const jobs = await this.analyses.claimDue(free, LEASE_MS);
      for (const job of jobs) {
        const work = this.process(job);
        this.running.add(work);
        void work.finally(() => this.running.delete(work));
      }
      return jobs.length;
    } catch (error) {
      this.logger.warn({ err: error }, 'analysis queue not read; the next poll tries again');
      return 0;
    } finally {
      this.polling = false;
    }
  }

  /** Waits for the analyses in progress (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  /** Draining: claims no more jobs; those under way finish (or are taken again after their lease). */
  stopClaiming(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopClaiming();
    // Bounded by the process's shutdown timeout; a job cut off is taken again after its lease.
    await this.idle();
  }

  private async process(job: ClaimedAnalysis): Promise<void> {
    let result: AnalysisResult;
    try {
      result = await this.runner.run(job);
    } catch (error) {
      await this.attemptFailed(job, error);
      return;
    }
    try {
      await this.store(job, result);
    } catch (error) {
      await this.attemptFailed(job, error);
    }
  }

  private async store(job: ClaimedAnalysis, result: AnalysisResult): Promise<void> {
    const deliveries = await this.transactions.run(async (tx) => {
      const stored = await this.analyses.complete(tx, job.callId, result);
      if (!stored) return 0; // re-queued meanwhile (a re-run): that run will report
      const charged = await this.ledger.chargeAnalysis(tx, job.callId, { inputTokens: result.inputTokens, outputTokens: result.outputTokens });
      const announced = await this.outbox.enqueue(tx, [
        { organizationId: job.organizationId, type: 'call.analyzed', callId: job.callId, data: { callId: job.callId, analysis: callAnalysisView(stored) } as unknown as InputJsonValue },
      ]);
      return charged + announced;
    });
    this.outbox.committed(deliveries);
    this.logger.info({ callId: job.callId, inputTokens: result.inputTokens, outputTokens: result.outputTokens }, 'call analysed');
  }

  private async attemptFailed(job: ClaimedAnalysis, error: unknown): Promise<void> {
    const message = error instanceof Error ? error.message : String(error);
    const permanent = error instanceof PermanentAnalysisError || job.attempts >= MAX_ANALYSIS_ATTEMPTS;
    const retryAt = permanent ? null : new Date(Date.now() + Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** (job.attempts - 1)));
    this.logger.warn({ callId: job.callId, attempt: job.attempts, err: error, retryAt }, permanent ? 'call analysis failed' : 'call analysis attempt failed; retried later');
    await this.analyses.attemptFailed(job.callId, message, retryAt).catch((storeError: unknown) => {
      this.logger.warn({ callId: job.callId, err: storeError }, 'analysis failure not stored; the lease will expire and it runs again');
    });
  }
}
