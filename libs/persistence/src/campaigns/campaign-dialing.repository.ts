import { Injectable } from '@nestjs/common';
import { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../prisma.service';
import { LIVE_CALL_CONDITION } from '../repositories/call-admission';
import type { Tx } from '../transaction-runner';
import { isUuid } from '../uuid';
import { toCampaignRecord, type CampaignOutcome, type CampaignRecord } from './campaign-records';

/** What a call says about how its attempt went (the columns the outcome is read from). */
export interface CampaignCallFacts {
  status: string;
  answeredAt: Date | null;
  answeredBy: string | null;
  streamStartedAt: Date | null;
  endReason: string | null;
  endedAt: Date | null;
}

/** A contact the dialer claimed: its attempt is to be placed now. */
export interface ClaimedCampaignContact {
  id: string;
  position: number;
  to: string;
  timeZone: string;
  variables: Record<string, string>;
  /** The attempt being placed (1 for the first call). */
  attempt: number;
}

/** A dialing contact whose lease expired, with the call of its attempt when there is one. */
export interface ExpiredCampaignAttempt {
  contactId: string;
  attempt: number;
  call: (CampaignCallFacts & { id: string; live: boolean }) | null;
}

/** The attempt a call was placed for, while its contact still waits for it. */
export interface CallCampaignAttempt {
  campaignId: string;
  contactId: string;
  attempt: number;
  call: CampaignCallFacts;
}

/** What an attempt's outcome does to its contact: tried again at `at`, or done. */
export type AttemptResolution = { status: 'pending'; at: Date } | { status: 'done' };

/**
 * The dialer's side of campaign_contacts: the queue of contacts to call. Every method that changes
 * a contact runs in the caller's transaction, after it locked the campaign row (CampaignRepository
 * .lock or lockForDialing): all of a campaign's contacts change under that one lock. `now` is the
 * campaign clock (windows, due times); leases are real time (now() of the database).
 */
@Injectable()
export class CampaignDialingRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Campaigns a dialer tick should visit: running ones that have started (by the campaign clock),
   * least recently visited first, and any campaign with a dialing contact whose lease expired (its
   * process died), whatever its status or start.
   */
  async campaignsToVisit(now: Date, limit: number): Promise<string[]> {
    const rows = await this.prisma.$queryRaw<Array<{ id: string }>>(Prisma.sql`
      (SELECT id FROM campaigns WHERE status = 'running' AND start_at <= ${now.toISOString()}::timestamptz ORDER BY visited_at NULLS FIRST LIMIT ${limit})
      UNION
      (SELECT DISTINCT campaign_id FROM campaign_contacts WHERE status = 'dialing' AND lease_until < now() LIMIT ${limit})`);
    return rows.map((row) => row.id);
  }

  /**
   * Locks the campaign for this dialer tick, or null when another process holds it (SKIP LOCKED:
   * that process is dialing it right now, and no process ever waits for another).
   */
  async lockForDialing(tx: Tx, id: string): Promise<CampaignRecord | null> {
    if (!isUuid(id)) return null;
    const rows = await tx.$queryRaw<Array<{ id: string }>>(Prisma.sql`
      SELECT id FROM campaigns WHERE id = ${id}::uuid FOR UPDATE SKIP LOCKED`);
    if (rows.length === 0) return null;
    return toCampaignRecord(await tx.campaign.update({ where: { id }, data: { visitedAt: new Date() } }));
  }

  /** Dialing contacts of the campaign whose lease expired, with their attempt's call (if placed) and whether it still holds a slot. */
  async expiredAttempts(tx: Tx, campaignId: string, limit: number): Promise<ExpiredCampaignAttempt[]> {
    const rows = await tx.$queryRaw<Array<CallFactsRow & { contact_id: string; attempts: number; call_id: string | null; live: boolean }>>(Prisma.sql`
      SELECT cc.id AS contact_id, cc.attempts, c.id AS call_id, c.status, c.answered_at, c.answered_by, c.stream_started_at,
             c.end_reason, c.ended_at, (c.id IS NOT NULL AND ${LIVE_CALL_CONDITION}) AS live
      FROM campaign_contacts cc
      LEFT JOIN calls c ON c.campaign_contact_id = cc.id AND c.campaign_attempt = cc.attempts
      WHERE cc.campaign_id = ${campaignId}::uuid AND cc.status = 'dialing' AND cc.lease_until < now()
      ORDER BY cc.lease_until
      LIMIT ${limit}`);
    return rows.map((row) => ({
      contactId: row.contact_id,
      attempt: row.attempts,
      call: row.call_id === null ? null : { id: row.call_id, live: row.live, ...toFacts(row) },
    }));
  }

  /** A placed attempt whose call is still live: look again after another lease. */
  async extendLease(tx: Tx, contactId: string, leaseMs: number): Promise<void> {
    await tx.$executeRaw(Prisma.sql`
      UPDATE campaign_contacts SET lease_until = now() + make_interval(secs => ${leaseMs / 1000}), updated_at = now()
      WHERE id = ${contactId}::uuid AND status = 'dialing'`);
  }

  async countDialing(tx: Tx, campaignId: string): Promise<number> {
    const rows = await tx.$queryRaw<Array<{ n: number }>>(Prisma.sql`
      SELECT count(*)::int AS n FROM campaign_contacts WHERE campaign_id = ${campaignId}::uuid AND status = 'dialing'`);
    return rows[0]?.n ?? 0;
  }

  /** Whether any contact is still to be called or being called (else the campaign is over). */
  async hasRemaining(tx: Tx, campaignId: string): Promise<boolean> {
    const rows = await tx.$queryRaw<Array<{ remaining: boolean }>>(Prisma.sql`
      SELECT EXISTS (SELECT 1 FROM campaign_contacts WHERE campaign_id = ${campaignId}::uuid AND status IN ('pending', 'dialing')) AS remaining`);
    return rows[0]?.remaining ?? false;
  }

  /** The time zones of the contacts due now: at most one row per zone, whatever the number of contacts. */
  async dueTimeZones(tx: Tx, campaignId: string, now: Date): Promise<string[]> {
    const rows = await tx.$queryRaw<Array<{ time_zone: string }>>(Prisma.sql`
      SELECT DISTINCT time_zone FROM campaign_contacts
      WHERE campaign_id = ${campaignId}::uuid AND status = 'pending' AND next_attempt_at <= ${now.toISOString()}::timestamptz`);
    return rows.map((row) => row.time_zone);
  }

  /**
   * Claims up to `limit` due contacts in the given zones (earliest due first, then in their order):
   * dialing, attempt + 1, leased to this process for `leaseMs` while it places their calls.
   */
  async claim(tx: Tx, campaignId: string, input: { now: Date; timeZones: readonly string[]; limit: number; leaseMs: number }): Promise<ClaimedCampaignContact[]> {
    if (input.limit <= 0 || input.timeZones.length === 0) return [];
    const rows = await tx.$queryRaw<Array<{ id: string; position: number; to_number: string; time_zone: string; variables: Prisma.JsonValue; attempts: number }>>(Prisma.sql`
      UPDATE campaign_contacts cc
      SET status = 'dialing', attempts = cc.attempts + 1, lease_until = now() + make_interval(secs => ${input.leaseMs / 1000}), updated_at = now()
      WHERE cc.id IN (
        SELECT id FROM campaign_contacts
        WHERE campaign_id = ${campaignId}::uuid AND status = 'pending' AND next_attempt_at <= ${input.now.toISOString()}::timestamptz
          AND time_zone = ANY(${[...input.timeZones]}::text[])
        ORDER BY next_attempt_at, position
        LIMIT ${input.limit})
      RETURNING cc.id, cc.position, cc.to_number, cc.time_zone, cc.variables, cc.attempts`);
    return rows
      .map((row) => ({ id: row.id, position: row.position, to: row.to_number, timeZone: row.time_zone, variables: (row.variables ?? {}) as Record<string, string>, attempt: row.attempts }))
      .sort((a, b) => a.position - b.position);
  }

  /**
   * Gives back an attempt that was never placed (refused before its call row existed, or its process
   * died first): the contact is `to` again, the attempt uncounted, due at `at`. Nothing happens when
   * a call exists for the attempt (it was placed after all: its end decides) or the contact moved on.
   */
  async releaseAttempt(tx: Tx, contactId: string, attempt: number, to: 'pending' | 'cancelled', at: Date): Promise<boolean> {
    const released = await tx.$executeRaw(Prisma.sql`
      UPDATE campaign_contacts cc
      SET status = ${to}, attempts = cc.attempts - 1, next_attempt_at = ${at.toISOString()}::timestamptz, lease_until = NULL, updated_at = now()
      WHERE cc.id = ${contactId}::uuid AND cc.status = 'dialing' AND cc.attempts = ${attempt}
        AND NOT EXISTS (SELECT 1 FROM calls c WHERE c.campaign_contact_id = cc.id AND c.campaign_attempt = ${attempt})`);
    return released === 1;
  }

  /** The campaign attempt a call was placed for, while its contact is still dialing that attempt (else null). */
  async attemptOfCall(tx: Tx, callId: string): Promise<CallCampaignAttempt | null> {
    if (!isUuid(callId)) return null;
    const rows = await tx.$queryRaw<Array<CallFactsRow & { campaign_id: string; contact_id: string; attempt: number }>>(Prisma.sql`
      SELECT cc.campaign_id, cc.id AS contact_id, c.campaign_attempt AS attempt, c.status, c.answered_at, c.answered_by,
             c.stream_started_at, c.end_reason, c.ended_at
      FROM calls c
      JOIN campaign_contacts cc ON cc.id = c.campaign_contact_id AND cc.attempts = c.campaign_attempt AND cc.status = 'dialing'
      WHERE c.id = ${callId}::uuid`);
    const row = rows[0];
    return row ? { campaignId: row.campaign_id, contactId: row.contact_id, attempt: row.attempt, call: toFacts(row) } : null;
  }

  /**
   * Records an attempt's outcome on its contact (still dialing that attempt; false otherwise, as
   * when another transaction recorded it first) and what follows: another attempt, or done.
   */
  async recordOutcome(tx: Tx, contactId: string, attempt: number, outcome: CampaignOutcome, next: AttemptResolution): Promise<boolean> {
    const at = next.status === 'pending' ? next.at.toISOString() : null;
    const updated = await tx.$executeRaw(Prisma.sql`
      UPDATE campaign_contacts
      SET status = ${next.status}, outcome = ${outcome}, next_attempt_at = COALESCE(${at}::timestamptz, next_attempt_at), lease_until = NULL, updated_at = now()
      WHERE id = ${contactId}::uuid AND status = 'dialing' AND attempts = ${attempt}`);
    return updated === 1;
  }
}

interface CallFactsRow {
  status: string;
  answered_at: Date | null;
  answered_by: string | null;
  stream_started_at: Date | null;
  end_reason: string | null;
  ended_at: Date | null;
}

function toFacts(row: CallFactsRow): CampaignCallFacts {
  return {
    status: row.status,
    answeredAt: row.answered_at,
    answeredBy: row.answered_by,
    streamStartedAt: row.stream_started_at,
    endReason: row.end_reason,
    endedAt: row.ended_at,
  };
}
