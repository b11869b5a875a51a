import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@switchboard/config';
import {
  CampaignDialingRepository,
  CampaignRepository,
  readConcurrency,
  TransactionRunner,
  WebhookOutbox,
  type CampaignRecord,
  type ClaimedCampaignContact,
  type ConcurrencyPolicy,
  type Tx,
} from '@switchboard/persistence';
import { PinoLogger } from 'nestjs-pino';
import { CONCURRENCY_POLICY } from '../call-lifecycle/concurrency-policy';
import { Clock } from '../common/clock';
import { openTimeZones } from './calling-windows';
import { CampaignCallPlacer } from './campaign-call-placer';
import { outcomeOfCall } from './campaign-outcome';
import { CampaignOutcomes } from './campaign-outcomes.service';

/**
 * A claimed contact's lease: how long its process has to write the call row (admission may queue
 * for up to 7 s, Twilio answer in 10 s). Past it, a dialer takes the contact to have been
 * abandoned (its process died) and looks at what became of the attempt.
 */
export const CAMPAIGN_DIAL_LEASE_MS = 60_000;
/** Campaigns one tick visits at most (the least recently visited first, across processes). */
const MAX_CAMPAIGNS_PER_TICK = 50;
/** Contacts one tick claims per campaign at most, whatever its maxConcurrentCalls. */
const MAX_CLAIMS_PER_CAMPAIGN_TICK = 25;
/** Calls.create requests one process has in flight at once. */
const PLACEMENT_CONCURRENCY = 5;
/** Expired leases looked at per campaign and tick. */
const MAX_RECOVERIES_PER_TICK = 100;

interface Claim {
  campaign: CampaignRecord | null;
  contacts: ClaimedCampaignContact[];
  deliveries: number;
}

/**
 * Dials running campaigns. It runs in every process, on an interval: each tick visits campaigns
 * one at a time, and for each runs ONE short transaction that locks the campaign row (SKIP LOCKED:
 * a campaign another process is visiting is left to it), recovers attempts whose process died,
 * counts the calls in progress, and claims the due contacts whose local time is inside a calling
 * window, up to maxConcurrentCalls and the organization's free slots. The calls are placed after
 * that transaction commits (no transaction waits on Twilio), through the service POST /v1/calls
 * uses, so admission under the concurrency limit and budget, and Twilio placement, are the same.
 */
@Injectable()
export class CampaignDialer implements OnApplicationBootstrap, OnModuleDestroy {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;
  private stopped = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(CONCURRENCY_POLICY) private readonly policy: ConcurrencyPolicy,
    private readonly transactions: TransactionRunner,
    private readonly campaigns: CampaignRepository,
    private readonly dialing: CampaignDialingRepository,
    private readonly outcomes: CampaignOutcomes,
    private readonly placer: CampaignCallPlacer,
    private readonly outbox: WebhookOutbox,
    private readonly clock: Clock,
    private readonly logger: PinoLogger,
  ) {
    this.logger.setContext(CampaignDialer.name);
  }

  onApplicationBootstrap(): void {
    if (!this.config.campaigns.dialerEnabled) return;
    this.timer = setInterval(() => void this.tick(), this.config.campaigns.dialerIntervalMs);
    this.timer.unref();
  }

  /**
   * Before the database pool closes (Nest destroys this module's providers first): no new tick, and
   * the calls being placed are given their call rows, so a graceful restart leaves nothing to recover.
   */
  async onModuleDestroy(): Promise<void> {
    await this.stopClaiming();
  }

  /** Draining or stopping: no new pass; the pass under way finishes placing the calls it started. */
  async stopClaiming(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
  }

  /** One pass over the campaigns (also for tests); returns the calls placed. Never rejects; a pass already running is joined. */
  tick(): Promise<number> {
    if (this.stopped) return Promise.resolve(0);
    this.running ??= this.pass()
      .catch((error: unknown) => {
        this.logger.warn({ err: error }, 'campaign dialer pass failed; the next tick tries again');
        return 0;
      })
      .finally(() => (this.running = undefined));
    return this.running;
  }

  private async pass(): Promise<number> {
    let placed = 0;
    for (const campaignId of await this.dialing.campaignsToVisit(this.clock.now(), MAX_CAMPAIGNS_PER_TICK)) {
      if (this.stopped) break;
      try {
        placed += await this.visit(campaignId);
      } catch (error) {
        this.logger.warn({ err: error, campaignId }, 'campaign not dialed this tick');
      }
    }
    return placed;
  }

  private async visit(campaignId: string): Promise<number> {
    const now = this.clock.now();
    const claim = await this.transactions.run((tx) => this.claim(tx, campaignId, now));
    this.outbox.committed(claim.deliveries);
    if (claim.campaign === null || claim.contacts.length === 0) return 0;
    return this.placeAll(claim.campaign, claim.contacts);
  }

  private async claim(tx: Tx, campaignId: string, now: Date): Promise<Claim> {
    const locked = await this.dialing.lockForDialing(tx, campaignId);
    if (locked === null) return { campaign: null, contacts: [], deliveries: 0 };
    const recovery = await this.recoverAbandoned(tx, locked, now);
    let deliveries = recovery.deliveries;
    // Re-read under the same lock: recovering the last attempt may have completed the campaign.
    const campaign = recovery.recovered > 0 ? await this.campaigns.lock(tx, campaignId) : locked;
    if (campaign === null || campaign.status !== 'running' || campaign.startAt > now) return { campaign, contacts: [], deliveries };
    if (campaign.endAt !== null && campaign.endAt <= now) {
      // The schedule is over: whoever was not called is not; calls in progress finish.
      await this.campaigns.cancelPending(tx, campaign.id);
      return { campaign, contacts: [], deliveries: deliveries + (await this.outcomes.completeIfDone(tx, campaign, now)) };
    }
    const inProgress = await this.dialing.countDialing(tx, campaign.id);
    // The organization's own limit bounds the claim too (read without its lock: admission decides,
    // this only keeps the dialer from claiming contacts it knows admission would refuse).
    const organization = await readConcurrency(tx, campaign.organizationId, this.policy);
    const free = Math.min(campaign.maxConcurrentCalls - inProgress, organization.limit - organization.activeCalls, MAX_CLAIMS_PER_CAMPAIGN_TICK);
    if (free <= 0) return { campaign, contacts: [], deliveries };
    const timeZones = openTimeZones(campaign.callingWindows, await this.dialing.dueTimeZones(tx, campaign.id, now), now);
    const contacts = await this.dialing.claim(tx, campaign.id, { now, timeZones, limit: free, leaseMs: CAMPAIGN_DIAL_LEASE_MS });
    if (contacts.length === 0 && inProgress === 0) deliveries += await this.outcomes.completeIfDone(tx, campaign, now);
    return { campaign, contacts, deliveries };
  }

  /**
   * Dialing contacts whose lease expired (their process died, or is far behind): an attempt with no
   * call row was never placed and is given back, to be placed again (the call row's unique
   * (contact, attempt) stops a late first try from dialling too); an attempt whose call is over, or
   * no longer holds a slot, gets its outcome from that call; a call still live is waited for.
   */
  private async recoverAbandoned(tx: Tx, campaign: CampaignRecord, now: Date): Promise<{ recovered: number; deliveries: number }> {
    let deliveries = 0;
    const expiredAttempts = await this.dialing.expiredAttempts(tx, campaign.id, MAX_RECOVERIES_PER_TICK);
    for (const expired of expiredAttempts) {
      if (expired.call === null) {
        await this.dialing.releaseAttempt(tx, expired.contactId, expired.attempt, campaign.status === 'cancelled' ? 'cancelled' : 'pending', now);
      } else if (expired.call.live) {
        await this.dialing.extendLease(tx, expired.contactId, CAMPAIGN_DIAL_LEASE_MS);
      } else {
        deliveries += await this.outcomes.recordAttempt(tx, campaign, expired.contactId, expired.attempt, outcomeOfCall(expired.call));
      }
    }
    const abandoned = expiredAttempts.filter((expired) => expired.call === null || !expired.call.live).length;
    if (abandoned > 0) this.logger.warn({ campaignId: campaign.id, attempts: abandoned }, 'recovered campaign attempts whose process stopped before they ended');
    return { recovered: expiredAttempts.length, deliveries };
  }

  /**
   * Places the claimed calls, a few at a time. A refusal that concerns every call (the organization
   * at its limit, a reason to pause) stops the rest of this tick's; the unplaced are given back.
   */
  private async placeAll(campaign: CampaignRecord, contacts: ClaimedCampaignContact[]): Promise<number> {
    const queue = [...contacts];
    const unplaced: Array<{ contact: ClaimedCampaignContact; delayMs: number }> = [];
    let placed = 0;
    let pause: string | undefined;
    let stopDelayMs: number | undefined;
    const worker = async (): Promise<void> => {
      for (let contact = queue.shift(); contact !== undefined; contact = queue.shift()) {
        if (pause !== undefined || stopDelayMs !== undefined || this.stopped) {
          unplaced.push({ contact, delayMs: stopDelayMs ?? 0 });
          continue;
        }
        const result = await this.placer.place(campaign, contact);
        if (result.kind === 'placed') {
          placed += 1;
        } else if (result.kind === 'pause') {
          pause ??= result.reason;
          unplaced.push({ contact, delayMs: 0 });
        } else {
          if (result.stopsOthers) stopDelayMs ??= result.delayMs;
          unplaced.push({ contact, delayMs: result.delayMs });
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(PLACEMENT_CONCURRENCY, contacts.length) }, worker));
    if (unplaced.length > 0) await this.giveBack(campaign, unplaced, pause);
    return placed;
  }

  /**
   * Attempts that were not placed go back to pending, uncounted, due after their delay (the
   * organization at its limit: a few seconds; this process stopping: at once). The campaign is
   * paused with the reason when the refusal concerns all of its calls (hard budget reached, agent
   * or number gone).
   */
  private async giveBack(campaign: CampaignRecord, unplaced: Array<{ contact: ClaimedCampaignContact; delayMs: number }>, pause: string | undefined): Promise<void> {
    const now = this.clock.now().getTime();
    await this.transactions.run(async (tx) => {
      const current = await this.campaigns.lock(tx, campaign.id);
      if (current === null) return;
      if (pause !== undefined && current.status === 'running') {
        await this.campaigns.setStatus(tx, current.id, 'paused', pause);
        this.logger.warn({ campaignId: current.id, reason: pause }, 'campaign paused: its calls are refused');
      }
      for (const { contact, delayMs } of unplaced) {
        await this.dialing.releaseAttempt(tx, contact.id, contact.attempt, current.status === 'cancelled' ? 'cancelled' : 'pending', new Date(now + delayMs));
      }
    });
  }
}
