import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@switchboard/config';
import { PinoLogger } from 'nestjs-pino';
import { CallAnalysisWorker } from '../analysis/call-analysis.worker';
import { CampaignDialer } from '../campaigns/campaign-dialer';
import { MediaStreamService } from '../twilio/media-stream/media-stream.service';
import { WebhookDeliveryWorker } from '../webhooks/webhook-delivery.worker';
import { DRAIN_MESSAGE_GRACE_MS } from './drain-allowance';
import { ServerDrain } from './server-drain';

/** How often the drain looks whether the live calls have finished. */
const POLL_MS = 250;

export interface DrainReport {
  /** Live calls when the drain began. */
  callsAtStart: number;
  /** Calls still live at the bound, ended with the drain message. */
  endedWithMessage: number;
  durationMs: number;
}

/**
 * SIGTERM's drain (main.ts runs it before the application closes): readiness answers 503 at once,
 * the webhook, campaign and analysis workers stop claiming work (the other instances take it), and
 * live calls go on until they end by themselves or DRAIN_TIMEOUT_S passes. At the bound each call
 * still live hears DRAIN_MESSAGE and ends; none is cut mid-sentence by the deploy. It lasts at least
 * DRAIN_MIN_S even with no call: a load balancer takes a few health checks to see the 503, and
 * Kubernetes a moment to remove the pod's endpoint; until then new callers still arrive here, and
 * must find a server, not a closed port.
 */
@Injectable()
export class DrainCoordinator {
  private running: Promise<DrainReport> | undefined;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly state: ServerDrain,
    private readonly mediaStreams: MediaStreamService,
    private readonly webhooks: WebhookDeliveryWorker,
    private readonly campaigns: CampaignDialer,
    private readonly analyses: CallAnalysisWorker,
    private readonly logger: PinoLogger,
  ) {
    this.logger.setContext(DrainCoordinator.name);
  }

  /** Runs the drain once; a second call joins the first. */
  drain(): Promise<DrainReport> {
    this.running ??= this.run();
    return this.running;
  }

  private async run(): Promise<DrainReport> {
    const startedAt = performance.now();
    this.state.begin();
    const callsAtStart = this.mediaStreams.activeConnections;
    const { timeoutMs, minMs, message } = this.config.drain;
    this.logger.info({ liveCalls: callsAtStart, drainTimeoutS: timeoutMs / 1000 }, 'draining: readiness answers 503, no new work is claimed, live calls go on');
    // Workers stop in the background: an attempt in flight must not hold up the calls' own wait.
    const workersStopped = Promise.allSettled([this.webhooks.stopClaiming(), this.campaigns.stopClaiming(), Promise.resolve(this.analyses.stopClaiming())]);
    await this.waitForCalls(startedAt + timeoutMs, startedAt + minMs);
    const endedWithMessage = this.mediaStreams.activeConnections;
    if (endedWithMessage > 0) {
      this.logger.warn({ liveCalls: endedWithMessage }, 'drain bound reached: ending the calls still live with the drain message');
      await this.mediaStreams.endLiveCallsWithMessage(message);
      await this.waitForCalls(performance.now() + DRAIN_MESSAGE_GRACE_MS);
    }
    await workersStopped;
    const report = { callsAtStart, endedWithMessage, durationMs: Math.round(performance.now() - startedAt) };
    this.logger.info(report, 'drained');
    return report;
  }

  /** Until no call is live (and not before `notBefore`), or the deadline. */
  private async waitForCalls(deadline: number, notBefore = 0): Promise<void> {
    while ((this.mediaStreams.activeConnections > 0 || performance.now() < notBefore) && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(POLL_MS, Math.max(1, deadline - performance.now()))));
    }
  }
}
