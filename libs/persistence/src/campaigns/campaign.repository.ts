import { Injectable } from '@nestjs/common';
import { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../prisma.service';
import { decodeCallCursor, encodeCallCursor } from '../repositories/call-cursor';
import { invalidInput } from '../persistence.errors';
import type { Tx } from '../transaction-runner';
import { isUuid } from '../uuid';
import {
  emptyProgress,
  toCampaignRecord,
  type CampaignContactPage,
  type CampaignContactStatus,
  type CampaignOutcome,
  type CampaignPage,
  type CampaignProgress,
  type CampaignRecord,
  type CampaignStatus,
  type NewCampaign,
  type NewCampaignContact,
} from './campaign-records';

export const CAMPAIGN_LIST_MAX_LIMIT = 100;
export const CAMPAIGN_CONTACT_LIST_MAX_LIMIT = 200;

export interface ListCampaignContactsInput {
  limit: number;
  cursor?: string | undefined;
  status?: CampaignContactStatus | undefined;
}

/**
 * campaigns and campaign_contacts as the API sees them: creating a campaign with its contacts,
 * reading it with its progress, and the locked reads and writes its state changes are made of.
 * The dialer's queries are in CampaignDialingRepository. Transactions belong to the services.
 */
@Injectable()
export class CampaignRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Inserts a campaign and every contact, in the caller's transaction. The contacts go in one
   * statement (unnest), whatever their number, each due at the campaign's start.
   */
  async insert(tx: Tx, campaign: NewCampaign, contacts: readonly NewCampaignContact[]): Promise<CampaignRecord> {
    if (contacts.length === 0) throw invalidInput('A campaign needs at least one contact');
    const row = await tx.campaign.create({
      data: {
        organizationId: campaign.organizationId,
        name: campaign.name,
        agentId: campaign.agentId,
        fromNumber: campaign.fromNumber,
        status: 'running',
        timeZone: campaign.timeZone,
        callingWindows: campaign.callingWindows as Prisma.InputJsonValue,
        startAt: campaign.startAt,
        endAt: campaign.endAt,
        maxConcurrentCalls: campaign.maxConcurrentCalls,
        retryOnBusy: campaign.retry.onBusy,
        retryOnNoAnswer: campaign.retry.onNoAnswer,
        retryOnVoicemail: campaign.retry.onVoicemail,
        maxAttempts: campaign.retry.maxAttempts,
        retryDelaySeconds: campaign.retry.delaySeconds,
        machineDetection: campaign.machineDetection,
        voicemailMode: campaign.voicemail.mode,
        voicemailMessage: campaign.voicemail.message,
        contactCount: contacts.length,
      },
    });
    await tx.$executeRaw(Prisma.sql`
      INSERT INTO campaign_contacts (id, campaign_id, position, to_number, time_zone, variables, status, next_attempt_at)
      SELECT gen_random_uuid(), ${row.id}::uuid, t.position::int, t.to_number, t.time_zone, t.variables, 'pending', ${campaign.startAt.toISOString()}::timestamptz
      FROM unnest(${contacts.map((contact) => contact.to)}::text[], ${contacts.map((contact) => contact.timeZone)}::text[],
                  ${contacts.map((contact) => JSON.stringify(contact.variables))}::jsonb[])
           WITH ORDINALITY AS t(to_number, time_zone, variables, position)`);
    return toCampaignRecord(row);
  }

  async find(organizationId: string, id: string): Promise<CampaignRecord | null> {
    if (!isUuid(organizationId) || !isUuid(id)) return null;
    const row = await this.prisma.campaign.findFirst({ where: { id, organizationId } });
    return row ? toCampaignRecord(row) : null;
  }

  /** Newest first, keyset-paginated on (createdAt, id). */
  async list(organizationId: string, limit: number, cursor?: string): Promise<CampaignPage> {
    if (!isUuid(organizationId)) return { items: [], nextCursor: null };
    const take = Math.min(Math.max(1, Math.trunc(limit)), CAMPAIGN_LIST_MAX_LIMIT);
    const after = cursor === undefined ? undefined : decodeCallCursor(cursor);
    const rows = await this.prisma.campaign.findMany({
      where: {
        organizationId,
        ...(after && { OR: [{ createdAt: { lt: after.createdAt } }, { createdAt: after.createdAt, id: { lt: after.id } }] }),
      },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: take + 1,
    });
    const items = rows.slice(0, take).map(toCampaignRecord);
    const last = items[items.length - 1];
    return { items, nextCursor: rows.length > take && last ? encodeCallCursor({ createdAt: last.createdAt, id: last.id }) : null };
  }

  /** Progress of each campaign named (one grouped read; in `tx` when given); a campaign without contacts is absent. */
  async progress(campaignIds: readonly string[], tx?: Tx): Promise<Map<string, CampaignProgress>> {
    const result = new Map<string, CampaignProgress>();
    if (campaignIds.length === 0) return result;
    const db = tx ?? this.prisma;
    const rows = await db.$queryRaw<Array<{ campaign_id: string; status: CampaignContactStatus; outcome: CampaignOutcome | null; contacts: number; attempts: number }>>(Prisma.sql`
      SELECT campaign_id, status, outcome, count(*)::int AS contacts, sum(attempts)::int AS attempts
      FROM campaign_contacts
      WHERE campaign_id = ANY(${[...campaignIds]}::uuid[])
      GROUP BY campaign_id, status, outcome`);
    for (const row of rows) {
      const progress = result.get(row.campaign_id) ?? emptyProgress();
      progress.total += row.contacts;
      progress.byStatus[row.status] += row.contacts;
      if (row.status === 'done' && row.outcome !== null) progress.byOutcome[row.outcome] += row.contacts;
      progress.attempts += row.attempts;
      result.set(row.campaign_id, progress);
    }
    return result;
  }

  /**
   * A page of the campaign's contacts in their order, each with the calls placed for it. Null when
   * the campaign is not the organization's.
   */
  async contacts(organizationId: string, campaignId: string, input: ListCampaignContactsInput): Promise<CampaignContactPage | null> {
    if (!(await this.find(organizationId, campaignId))) return null;
    const take = Math.min(Math.max(1, Math.trunc(input.limit)), CAMPAIGN_CONTACT_LIST_MAX_LIMIT);
    const after = input.cursor === undefined ? 0 : decodePositionCursor(input.cursor);
    const status = input.status === undefined ? Prisma.empty : Prisma.sql`AND cc.status = ${input.status}`;
    const rows = await this.prisma.$queryRaw<ContactRow[]>(Prisma.sql`
      SELECT cc.id, cc.position, cc.to_number, cc.time_zone, cc.variables, cc.status, cc.outcome, cc.attempts, cc.next_attempt_at,
             COALESCE((
               SELECT json_agg(json_build_object('id', c.id, 'attempt', c.campaign_attempt, 'status', c.status, 'answeredBy', c.answered_by,
                                                 'endReason', c.end_reason, 'startedAt', c.started_at, 'endedAt', c.ended_at)
                               ORDER BY c.campaign_attempt)
               FROM calls c WHERE c.campaign_contact_id = cc.id), '[]'::json) AS calls
      FROM campaign_contacts cc
      WHERE cc.campaign_id = ${campaignId}::uuid AND cc.position > ${after}::int ${status}
      ORDER BY cc.position
      LIMIT ${take + 1}`);
    const items = rows.slice(0, take).map(toContactRecord);
    const last = items[items.length - 1];
    return { items, nextCursor: rows.length > take && last ? encodePositionCursor(last.position) : null };
  }

  /**
   * Locks the campaign row for the rest of the transaction (every change of a campaign's state takes
   * this lock first, so the dialer, outcomes and the API never act on a stale status). With
   * `organizationId`, another organization's campaign reads as missing.
   */
  async lock(tx: Tx, id: string, organizationId?: string): Promise<CampaignRecord | null> {
    if (!isUuid(id) || (organizationId !== undefined && !isUuid(organizationId))) return null;
    const owner = organizationId === undefined ? Prisma.empty : Prisma.sql`AND organization_id = ${organizationId}::uuid`;
    const rows = await tx.$queryRaw<Array<{ id: string }>>(Prisma.sql`SELECT id FROM campaigns WHERE id = ${id}::uuid ${owner} FOR UPDATE`);
    if (rows.length === 0) return null;
    return toCampaignRecord(await tx.campaign.findUniqueOrThrow({ where: { id } }));
  }

  /** Sets a locked campaign's status (completedAt for a campaign that completed). */
  async setStatus(tx: Tx, id: string, status: CampaignStatus, reason: string | null, completedAt: Date | null = null): Promise<CampaignRecord> {
    const row = await tx.campaign.update({ where: { id }, data: { status, statusReason: reason, completedAt, updatedAt: new Date() } });
    return toCampaignRecord(row);
  }

  /** Pending contacts of a locked campaign are not called (again): cancelled, keeping their last outcome. */
  async cancelPending(tx: Tx, campaignId: string): Promise<number> {
    return tx.$executeRaw(Prisma.sql`
      UPDATE campaign_contacts SET status = 'cancelled', updated_at = now()
      WHERE campaign_id = ${campaignId}::uuid AND status = 'pending'`);
  }
}

interface ContactRow {
  id: string;
  position: number;
  to_number: string;
  time_zone: string;
  variables: Prisma.JsonValue;
  status: CampaignContactStatus;
  outcome: CampaignOutcome | null;
  attempts: number;
  next_attempt_at: Date;
  calls: Array<{ id: string; attempt: number; status: string; answeredBy: string | null; endReason: string | null; startedAt: string; endedAt: string | null }>;
}

function toContactRecord(row: ContactRow) {
  return {
    id: row.id,
    position: row.position,
    to: row.to_number,
    timeZone: row.time_zone,
    variables: (row.variables ?? {}) as Record<string, string>,
    status: row.status,
    outcome: row.outcome,
    attempts: row.attempts,
    nextAttemptAt: row.next_attempt_at,
    calls: row.calls.map((call) => ({ ...call, startedAt: new Date(call.startedAt), endedAt: call.endedAt === null ? null : new Date(call.endedAt) })),
  };
}

/** Opaque to clients, like every cursor of the API: the last position of the page. */
function encodePositionCursor(position: number): string {
  return Buffer.from(JSON.stringify({ p: position }), 'utf8').toString('base64url');
}

function decodePositionCursor(encoded: string): number {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8'));
  } catch {
    throw invalidInput('Invalid cursor: not a cursor returned by this API');
  }
  const position = (parsed as { p?: unknown } | null)?.p;
  if (typeof position !== 'number' || !Number.isInteger(position) || position < 0) throw invalidInput('Invalid cursor: not a cursor returned by this API');
  return position;
}
