import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown, Optional } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@switchboard/config';
import { CallEventRepository, CallStreamRepository, isTerminalCallStatus, isTwilioCallStatus, type QuietCall } from '@switchboard/persistence';
import { describeTwilioFailure } from '../twilio/call-control/twilio-failure';
import { TwilioRestClientFactory } from '../twilio/call-control/twilio-rest-client.factory';
import { TwilioAccountService } from '../twilio/accounts/twilio-account.service';
import { LiveCalls } from '../call-runtime/live-calls';
import { CallEndService } from './call-end.service';

/** Calls reconciled per pass at most: an outage's backlog is worked through over a few passes. */
const RECONCILE_BATCH = 50;
/** The end reason and event type of a call the reconciler ended. */
export const RECONCILED_END_REASON = 'reconciled';

/** What Twilio said about a quiet call, or why it could not be asked. */
type TwilioView = { status: string; durationSeconds: number | null } | { unknown: string };

/**
 * Ends calls nobody carries any more. A call is live until something ends it: the media path
 * (finalise), Twilio's terminal status callback, or an API hang-up. If the process carrying the
 * stream died, or a callback was lost, none of those happens and the call would hold a concurrency
 * slot for ever, unpriced. Every CALL_RECONCILE_INTERVAL_MS this looks for live calls whose media
 * has not been seen (heartbeat) for CALL_RECONCILE_AFTER_MS, or whose stream never started before
 * its token expired, asks Twilio for each one's status (with the call's own account), applies it,
 * and finalises the call with end reason 'reconciled' and a 'reconciled' event saying what Twilio
 * said. A call Twilio still reports live is hung up there first: no process serves it any more.
 * Safe to run in every process: finalise is idempotent (the first end reason wins).
 */
@Injectable()
export class CallReconciler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(CallReconciler.name);
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly calls: CallStreamRepository,
    private readonly callEvents: CallEventRepository,
    private readonly ends: CallEndService,
    private readonly accounts: TwilioAccountService,
    private readonly restClients: TwilioRestClientFactory,
    /** The calls this process carries: never taken for quiet here, whatever their heartbeat says (a second process's reconciler has none). */
    @Optional() private readonly liveCalls?: LiveCalls,
  ) {}

  onApplicationBootstrap(): void {
    const intervalMs = this.config.calls.reconcileIntervalMs;
    if (intervalMs === 0) return;
    this.timer = setInterval(() => void this.reconcileNow(), intervalMs);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }

  /** One pass (also for tests and the operator): returns how many calls were ended. Never rejects. */
  reconcileNow(now = new Date()): Promise<number> {
    this.running ??= this.pass(now)
      .catch((error: unknown) => {
        this.logger.warn(`reconciliation pass failed (the next one will try again): ${error instanceof Error ? error.message : String(error)}`);
        return 0;
      })
      .finally(() => (this.running = undefined));
    return this.running;
  }

  private async pass(now: Date): Promise<number> {
    const quietSince = new Date(now.getTime() - this.config.calls.reconcileAfterMs);
    let ended = 0;
    for (const call of await this.calls.findQuiet(quietSince, RECONCILE_BATCH)) {
      try {
        if (await this.reconcile(call, now)) ended += 1;
      } catch (error) {
        this.logger.warn(`call ${call.id} not reconciled yet: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    if (ended > 0) this.logger.log(`reconciled ${ended} call(s) that nobody carried any more`);
    return ended;
  }

  private async reconcile(call: QuietCall, now: Date): Promise<boolean> {
    // Its heartbeat was late (the database was slow), but its runtime here is live: that runtime ends it.
    if (this.liveCalls?.carrying(call.id)) return false;
    const twilio = await this.askTwilio(call);
    if ('status' in twilio && call.twilioCallSid !== null && isTwilioCallStatus(twilio.status)) {
      // Twilio's own word first, so the status, its end time and billed duration are right.
      await this.ends.applyStatusCallback({
        twilioCallSid: call.twilioCallSid,
        status: twilio.status,
        callDurationSeconds: twilio.durationSeconds ?? undefined,
        at: now,
      });
    }
    // Another process's reconciler (or a late finalise) may have ended it meanwhile: the first end
    // wins, and only the reconciler that ended it says so in the call's log.
    const applied = await this.ends.finalise(call.id, { endReason: RECONCILED_END_REASON, endedAt: now });
    if (!applied) return false;
    await this.callEvents.append(call.id, {
      type: RECONCILED_END_REASON,
      at: now,
      payload: {
        mediaSeenAt: call.mediaSeenAt?.toISOString() ?? null,
        streamStarted: call.streamStartedAt !== null,
        ...('status' in twilio ? { twilioStatus: twilio.status } : { twilioStatus: null, twilioUnknown: twilio.unknown }),
      },
    });
    return true;
  }

  /** Twilio's status of the call, hanging it up when Twilio still has it live (nobody here serves it). */
  private async askTwilio(call: QuietCall): Promise<TwilioView> {
    if (call.twilioCallSid === null) return { unknown: 'the call has no CallSid' };
    const rest = this.accounts.restCredentials(await this.accounts.forAccountSid(call.twilioAccountSid));
    if (!rest) return { unknown: 'no Twilio credentials for the call\'s account' };
    const client = this.restClients.forAccount(rest);
    try {
      let fetched = await client.calls(call.twilioCallSid).fetch();
      if (!isTerminalCallStatus(fetched.status)) fetched = await client.calls(call.twilioCallSid).update({ status: 'completed' });
      return { status: fetched.status, durationSeconds: fetched.duration === null || fetched.duration === undefined ? null : Number(fetched.duration) };
    } catch (error) {
      return { unknown: describeTwilioFailure(error).message };
    }
  }
}
