import { Injectable } from '@nestjs/common';
import { NO_MEASURED_USAGE, type MeasuredCallUsage } from '@switchboard/billing';
import {
  CallAnalysisRepository,
  CallRepository,
  CostLedger,
  invalidInput,
  isTerminalCallStatus,
  isTwilioCallStatus,
  isUuid,
  TransactionRunner,
  WebhookOutbox,
  type LockedCall,
  type StatusCallbackInput,
  type Tx,
} from '@switchboard/persistence';
import { CampaignOutcomes } from '../campaigns/campaign-outcomes.service';
import { enqueueCallEvent } from './call-webhook-events';

/** How a call ended, as the media path (or an API hang-up, or the reconciler) saw it. */
export interface CallEnd {
  endReason: string;
  endedAt: Date;
  /** What the media path measured, for the ledger. */
  usage?: MeasuredCallUsage;
}

/**
 * Gives calls their final state: Switchboard's own end (finalise) and Twilio's status callbacks.
 * Each runs in ONE transaction with the call row locked, writing the state change, the call.* webhook
 * events it causes and the call's cost ledger together, so none can exist without the others.
 */
@Injectable()
export class CallEndService {
  constructor(
    private readonly transactions: TransactionRunner,
    private readonly calls: CallRepository,
    private readonly outbox: WebhookOutbox,
    private readonly ledger: CostLedger,
    private readonly analyses: CallAnalysisRepository,
    private readonly campaignOutcomes: CampaignOutcomes,
  ) {}

  /**
   * Records why the call ended. Idempotent: the first end reason wins and later calls change nothing
   * about the call (returns false), though their `usage` still reaches its ledger. endedAt keeps the
   * earliest time seen, whether it came from here or from Twilio's terminal status callback. Emits
   * call.ended when this is the call's first end, and writes the call's cost ledger, in the same
   * transaction. One attempt: CallEndRetrier retries it until it lands.
   */
  async finalise(callId: string, end: CallEnd): Promise<boolean> {
    if (!isUuid(callId)) return false;
    if (end.endReason.trim().length === 0) throw invalidInput('endReason must not be empty');
    const { applied, deliveries } = await this.transactions.run(async (tx) => {
      const before = await this.calls.lock(tx, { id: callId });
      if (!before) return { applied: false, deliveries: 0 };
      // Already ended by someone else (an API hang-up): the end reason stays, but what the media path
      // measured still reaches the ledger (as a correction when the call was priced without it).
      if (before.endReason !== null) return { applied: false, deliveries: end.usage ? await this.ledger.charge(tx, callId, end.usage) : 0 };
      await this.calls.setEndReason(tx, callId, end.endReason, end.endedAt);
      // The transcript is stored before this (the media path flushes it first), so the analysis
      // queued here sees the whole conversation; it survives a restart as it is a row of this commit.
      if (before.analysisEnabled) await this.analyses.enqueueForEndedCall(tx, callId);
      const ended = await this.enqueueEndedIfFirstEnd(tx, before);
      // A campaign's call: its attempt's outcome commits with the call's end.
      const campaign = before.inCampaign ? await this.campaignOutcomes.callEnded(tx, callId) : 0;
      return { applied: true, deliveries: ended + campaign + (await this.ledger.charge(tx, callId, end.usage ?? NO_MEASURED_USAGE)) };
    });
    this.outbox.committed(deliveries);
    return applied;
  }

  /**
   * Applies a Twilio status callback (callbacks for a call may arrive concurrently and out of order;
   * see CallRepository.applyStatus for the ordering rules). The first 'in-progress' emits
   * call.answered, and a terminal status that is the call's first end emits call.ended, in the same
   * transaction. Returns false when no call has this CallSid.
   */
  async applyStatusCallback(input: StatusCallbackInput): Promise<boolean> {
    if (!isTwilioCallStatus(input.status)) throw invalidInput(`Unknown Twilio CallStatus '${input.status}'`);
    const { found, deliveries } = await this.transactions.run(async (tx) => {
      // Locked first so that the old answered_at / ended_at decide, race-free, whether this
      // callback is the one that answered or ended the call (each emits its webhook event once).
      const before = await this.calls.lock(tx, { twilioCallSid: input.twilioCallSid });
      if (!before) return { found: false, deliveries: 0 };
      await this.calls.applyStatus(tx, before.id, input);
      const terminal = isTerminalCallStatus(input.status);
      let enqueued = 0;
      if (input.status === 'in-progress' && before.answeredAt === null) {
        enqueued += await enqueueCallEvent(this.outbox, tx, 'call.answered', await this.calls.read(tx, before.id));
      }
      if (terminal) enqueued += await this.enqueueEndedIfFirstEnd(tx, before);
      // Twilio's final word on a campaign's call (busy, no-answer, ...) is its attempt's outcome, unless our own end came first.
      if (terminal && before.inCampaign) enqueued += await this.campaignOutcomes.callEnded(tx, before.id);
      enqueued += await this.priceOnStatus(tx, before.id, terminal, input.billedMinutes !== undefined);
      return { found: true, deliveries: enqueued };
    });
    this.outbox.committed(deliveries);
    return found;
  }

  /**
   * The ledger's side of a status callback. Twilio's billed minutes arriving for a priced call correct
   * its telephony line. A call that ends without ever having had a media stream is priced now, as
   * nothing else will (Twilio still bills a refused call's message, or nothing for a call never
   * answered); a call with a stream is priced when the media path finalises it, with its meters.
   */
  private async priceOnStatus(tx: Tx, callId: string, terminal: boolean, billedMinutesSent: boolean): Promise<number> {
    const state = await this.calls.pricingState(tx, callId);
    if (state.priced) return billedMinutesSent ? this.ledger.correct(tx, callId, 'twilio_billed_duration') : 0;
    if (terminal && !state.streamStarted) return this.ledger.charge(tx, callId, NO_MEASURED_USAGE);
    return 0;
  }

  /**
   * call.ended is emitted exactly once per call, by whichever write first gives the call an
   * ended_at: Switchboard's finalise (media path) or Twilio's terminal status callback, whichever
   * commits first. Both lock the row before reading ended_at, so they cannot both see it unset.
   * The event carries the call as it stood then: endReason may still be null (Twilio was first)
   * or durationSeconds not yet known (finalise was first).
   */
  private async enqueueEndedIfFirstEnd(tx: Tx, before: LockedCall): Promise<number> {
    if (before.endedAt !== null) return 0;
    const after = await this.calls.read(tx, before.id);
    return after.endedAt === null ? 0 : enqueueCallEvent(this.outbox, tx, 'call.ended', after);
  }
}
