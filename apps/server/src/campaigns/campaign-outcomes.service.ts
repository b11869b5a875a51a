import { Injectable } from '@nestjs/common';
import {
  CampaignDialingRepository,
  CampaignRepository,
  emptyProgress,
  WebhookOutbox,
  type CampaignOutcome,
  type CampaignProgress,
  type CampaignRecord,
  type Tx,
} from '@switchboard/persistence';
import { Clock } from '../common/clock';
import { outcomeOfCall, resolveAttempt } from './campaign-outcome';

/**
 * Records how each campaign attempt ended, in the transaction that ends its call (CallEndService:
 * Switchboard's own end or Twilio's terminal status, whichever comes first), and completes the
 * campaign when that was its last contact, with campaign.completed in the same commit. So an
 * outcome can be neither lost nor counted twice: it commits with the call's end or not at all,
 * and only while the contact is still dialing that attempt.
 */
@Injectable()
export class CampaignOutcomes {
  constructor(
    private readonly campaigns: CampaignRepository,
    private readonly dialing: CampaignDialingRepository,
    private readonly outbox: WebhookOutbox,
    private readonly clock: Clock,
  ) {}

  /**
   * A call just ended (its row is locked by the caller's transaction). Does nothing for a call no
   * campaign placed, or whose attempt was already resolved. Returns the webhook deliveries written.
   */
  async callEnded(tx: Tx, callId: string): Promise<number> {
    const attempt = await this.dialing.attemptOfCall(tx, callId);
    if (!attempt) return 0;
    // Every change to a campaign's contacts is made under its row lock (the dialer's tick takes it
    // too), so whether the campaign is now complete is decided on a settled count.
    const campaign = await this.campaigns.lock(tx, attempt.campaignId);
    if (!campaign) return 0;
    return this.recordAttempt(tx, campaign, attempt.contactId, attempt.attempt, outcomeOfCall(attempt.call));
  }

  /** An attempt's outcome on its contact, retried or final; the campaign (locked by the caller) completes when nothing is left. */
  async recordAttempt(tx: Tx, campaign: CampaignRecord, contactId: string, attempt: number, outcome: CampaignOutcome): Promise<number> {
    const now = this.clock.now();
    const recorded = await this.dialing.recordOutcome(tx, contactId, attempt, outcome, resolveAttempt(campaign, outcome, attempt, now));
    return recorded ? this.completeIfDone(tx, campaign, now) : 0;
  }

  /**
   * A running or paused campaign (locked by the caller) with no contact pending or dialing is
   * completed, and campaign.completed is written to the outbox in the same transaction.
   */
  async completeIfDone(tx: Tx, campaign: CampaignRecord, now: Date): Promise<number> {
    if (campaign.status !== 'running' && campaign.status !== 'paused') return 0;
    if (await this.dialing.hasRemaining(tx, campaign.id)) return 0;
    const reason = campaign.endAt !== null && campaign.endAt <= now ? 'schedule_ended' : 'all_contacts_done';
    const completed = await this.campaigns.setStatus(tx, campaign.id, 'completed', reason, new Date());
    const progress = (await this.campaigns.progress([campaign.id], tx)).get(campaign.id) ?? emptyProgress();
    return this.outbox.enqueue(tx, [
      { organizationId: campaign.organizationId, type: 'campaign.completed', data: campaignCompletedData(completed, progress) },
    ]);
  }
}

/** campaign.completed's data: which campaign, why it ended, and how its contacts ended. */
export function campaignCompletedData(campaign: CampaignRecord, progress: CampaignProgress) {
  return {
    campaignId: campaign.id,
    name: campaign.name,
    status: campaign.status,
    reason: campaign.statusReason,
    completedAt: campaign.completedAt?.toISOString() ?? null,
    contacts: progress.total,
    /** Contacts done, by final outcome. */
    byOutcome: progress.byOutcome,
    /** Contacts not called (again): the schedule ended first. */
    cancelled: progress.byStatus.cancelled,
    attempts: progress.attempts,
  };
}
