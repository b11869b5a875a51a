import { Injectable } from '@nestjs/common';
import { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../prisma.service';
import { isUniqueViolation } from '../database-errors';
import { invalidInput, PersistenceError } from '../persistence.errors';
import type { Tx } from '../transaction-runner';
import { isUuid } from '../uuid';
import { decodeCallCursor, encodeCallCursor } from './call-cursor';
import { callListFilterWhere, type CallListFilters } from './call-list-filters';
import {
  CallDetail,
  CallPage,
  CallRecord,
  OMIT_INTERNAL_COLUMNS,
  toCallEventRecord,
  toCallRecord,
} from './call-records';
import { isTwilioCallStatus, TERMINAL_CALL_STATUSES } from './call-status';
import type { AnsweredByInput, IssueOutboundStreamTokenInput } from './call-admission';
import { toToolInvocationRecord, toTranscriptTurnRecord, toTurnLatencyRecord } from './conversation-records';

export const CALL_LIST_MAX_LIMIT = 200;

export interface TwilioCallIdentity {
  twilioCallSid: string;
  twilioAccountSid: string;
  fromNumber: string;
  toNumber: string;
  /** Twilio CallStatus from the incoming-call webhook, usually 'ringing'. */
  status: string;
  /** When the incoming-call webhook arrived (default: now); becomes the call's startedAt. */
  at?: Date;
}

export interface CreateInboundCallInput extends TwilioCallIdentity {
  organizationId: string;
  agentId: string;
  agentConfigVersion: number;
  /** sha256 of the one-time media-stream token handed to Twilio in the TwiML. */
  streamTokenHash: string;
  streamTokenExpiresAt: Date;
}

export interface CreateRejectedCallInput extends TwilioCallIdentity {
  /** Null when no organization owns the dialled number. */
  organizationId?: string | null;
  agentId?: string | null;
  endReason: string;
}

export interface StatusCallbackInput {
  twilioCallSid: string;
  status: string;
  /** Twilio SequenceNumber; callbacks can arrive out of order and this orders them. */
  sequenceNumber?: number;
  /** Twilio CallDuration. */
  callDurationSeconds?: number;
  /** Twilio Duration (billed minutes). */
  billedMinutes?: number;
  at: Date;
}

export interface ListCallsInput {
  organizationId: string;
  limit: number;
  /** Only valid together with the same `filters` as the page that returned it (see CallListFilters). */
  cursor?: string | null;
  filters?: CallListFilters;
}

/** A call row locked for the rest of a transaction, as it was before the transaction's write. */
export interface LockedCall {
  id: string;
  answeredAt: Date | null;
  endedAt: Date | null;
  endReason: string | null;
  /** Placed by a campaign: its end is an attempt's outcome. */
  inCampaign: boolean;
  /** The agent config version the call runs with has analysis.enabled: its end queues an analysis. */
  analysisEnabled: boolean;
}


/**
 * The calls table: queries only. Which writes must commit together (a call and its webhook event, an
 * end and its ledger) is decided by the call-lifecycle services, which run the writes that take a
 * `tx` inside their own transactions; the rest are single statements.
 */
@Injectable()
export class CallRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Inserts a call row; a CallSid already recorded is a conflict. */
  async insert(db: Tx, data: Prisma.CallUncheckedCreateInput): Promise<CallRecord> {
    try {
      return toCallRecord(await db.call.create({ data, omit: OMIT_INTERNAL_COLUMNS }));
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw new PersistenceError('conflict', `A call with CallSid ${data.twilioCallSid} is already recorded`);
      }
      throw error;
    }
  }

  /**
   * Inserts several calls in one statement (group admission), returned in the order given. A
   * CallSid already recorded fails the whole statement with `conflict`, like insert().
   */
  async insertMany(db: Tx, data: readonly Prisma.CallUncheckedCreateInput[]): Promise<CallRecord[]> {
    if (data.length === 0) return [];
    let rows;
    try {
      rows = await db.call.createManyAndReturn({ data: [...data], omit: OMIT_INTERNAL_COLUMNS });
    } catch (error) {
      if (isUniqueViolation(error)) throw new PersistenceError('conflict', 'One of the CallSids is already recorded');
      throw error;
    }
    // RETURNING order is not promised: put the rows back in the order given, by CallSid.
    const bySid = new Map(rows.map((row) => [row.twilioCallSid, row]));
    return data.map((entry) => {
      const row = bySid.get(entry.twilioCallSid ?? null);
      if (!row) throw new PersistenceError('conflict', `The call with CallSid ${entry.twilioCallSid} was not returned by its insert`);
      return toCallRecord(row);
    });
  }

  /** The end reasons of the calls with these CallSids (absent ones are not in the map). */
  async findEndReasonsBySids(db: Tx, twilioCallSids: readonly string[]): Promise<Map<string, string | null>> {
    const rows = await db.call.findMany({ where: { twilioCallSid: { in: [...twilioCallSids] } }, select: { twilioCallSid: true, endReason: true } });
    return new Map(rows.map((row) => [row.twilioCallSid as string, row.endReason]));
  }

  /** The end reason of the call with this CallSid, or null when there is none. */
  async findEndReasonBySid(db: Tx, twilioCallSid: string): Promise<{ endReason: string | null } | null> {
    return db.call.findUnique({ where: { twilioCallSid }, select: { endReason: true } });
  }

  /**
   * Replaces the stream token of the call with this CallSid and agent while its stream has not
   * started and it has not ended (a retried voice webhook); null when that is not the case.
   */
  async reissueStreamToken(input: Pick<CreateInboundCallInput, 'twilioCallSid' | 'agentId' | 'streamTokenHash' | 'streamTokenExpiresAt'>): Promise<CallRecord | null> {
    const { count } = await this.prisma.call.updateMany({
      where: { twilioCallSid: input.twilioCallSid, agentId: input.agentId, streamStartedAt: null, endReason: null },
      data: { streamTokenHash: input.streamTokenHash, streamTokenExpiresAt: input.streamTokenExpiresAt, streamTokenUsedAt: null },
    });
    if (count !== 1) return null;
    const call = await this.prisma.call.findUnique({ where: { twilioCallSid: input.twilioCallSid }, omit: OMIT_INTERNAL_COLUMNS });
    return call ? toCallRecord(call) : null;
  }

  /** Row-locks one call for the rest of the transaction and returns what it was before this write. */
  async lock(tx: Tx, by: { id: string } | { twilioCallSid: string }): Promise<LockedCall | null> {
    const where = 'id' in by ? Prisma.sql`id = ${by.id}::uuid` : Prisma.sql`twilio_call_sid = ${by.twilioCallSid}`;
    // What the call's end has to do besides its own state (a campaign outcome, an analysis) is read
    // in this statement, so a call that needs neither costs its end no further query.
    const rows = await tx.$queryRaw<Array<{ id: string; answered_at: Date | null; ended_at: Date | null; end_reason: string | null; in_campaign: boolean; analysis_enabled: boolean }>>(
      Prisma.sql`SELECT id, answered_at, ended_at, end_reason, campaign_contact_id IS NOT NULL AS in_campaign,
        EXISTS (SELECT 1 FROM agent_config_versions v
                WHERE v.agent_id = calls.agent_id AND v.version = calls.agent_config_version
                  AND v.config -> 'analysis' -> 'enabled' = 'true'::jsonb) AS analysis_enabled
      FROM calls WHERE ${where} FOR UPDATE OF calls`,
    );
    const row = rows[0];
    return row
      ? { id: row.id, answeredAt: row.answered_at, endedAt: row.ended_at, endReason: row.end_reason, inCampaign: row.in_campaign, analysisEnabled: row.analysis_enabled }
      : null;
  }

  /**
   * Gives a locked call its end reason; endedAt keeps the earliest time seen (Twilio's or ours). A
   * web call has no Twilio to report its final status, so its end is also its 'completed'.
   */
  async setEndReason(tx: Tx, callId: string, endReason: string, endedAt: Date): Promise<void> {
    const at = endedAt.toISOString();
    await tx.$executeRaw(Prisma.sql`
      UPDATE calls
      SET end_reason = ${endReason},
          ended_at = LEAST(ended_at, ${at}::timestamptz),
          status = CASE WHEN direction = 'web' THEN 'completed' ELSE status END,
          status_timeline = CASE WHEN direction = 'web'
            THEN status_timeline || jsonb_build_array(jsonb_build_object('status', 'completed', 'at', ${at}::text, 'sequenceNumber', NULL))
            ELSE status_timeline END,
          updated_at = now()
      WHERE id = ${callId}::uuid`);
  }

  /**
   * Applies a Twilio status callback to a locked call in one UPDATE:
   *  - the callback is always added to the timeline (kept sorted);
   *  - `status` moves only to a newer SequenceNumber, and never from a terminal status back to
   *    a non-terminal one (the only guard when Twilio sends no sequence numbers);
   *  - answeredAt / endedAt keep the earliest 'in-progress' / terminal time;
   *  - durations are set when present.
   */
  async applyStatus(tx: Tx, callId: string, input: StatusCallbackInput): Promise<void> {
    const { status, at } = input;
    if (!isTwilioCallStatus(status)) throw invalidInput(`Unknown Twilio CallStatus '${status}'`);
    const sequence = input.sequenceNumber ?? null;
    if (sequence !== null && (!Number.isInteger(sequence) || sequence < 0)) {
      throw invalidInput(`Invalid SequenceNumber ${String(input.sequenceNumber)}`);
    }
    const atIso = at.toISOString();
    const terminal = [...TERMINAL_CALL_STATUSES];
    const entry = JSON.stringify({ status, at: atIso, sequenceNumber: sequence });
    const isNewer = Prisma.sql`(${sequence}::int IS NULL OR last_status_sequence IS NULL OR ${sequence}::int > last_status_sequence)`;
    const wouldReopen = Prisma.sql`(status = ANY(${terminal}::text[]) AND NOT (${status}::text = ANY(${terminal}::text[])))`;
    const applies = Prisma.sql`(${isNewer} AND NOT ${wouldReopen})`;
    const isTerminal = Prisma.sql`(${status}::text = ANY(${terminal}::text[]))`;
    await tx.$executeRaw(Prisma.sql`
      UPDATE calls SET
        status_timeline = (
          SELECT jsonb_agg(e ORDER BY (e->>'sequenceNumber')::int NULLS FIRST, (e->>'at')::timestamptz)
          FROM jsonb_array_elements(status_timeline || jsonb_build_array(${entry}::jsonb)) AS e
        ),
        status = CASE WHEN ${applies} THEN ${status}::text ELSE status END,
        last_status_sequence = CASE WHEN ${applies} AND ${sequence}::int IS NOT NULL
                                    THEN ${sequence}::int ELSE last_status_sequence END,
        answered_at = CASE WHEN ${status}::text = 'in-progress'
                           THEN LEAST(answered_at, ${atIso}::timestamptz) ELSE answered_at END,
        ended_at = CASE WHEN ${isTerminal} THEN LEAST(ended_at, ${atIso}::timestamptz) ELSE ended_at END,
        duration_seconds = COALESCE(${input.callDurationSeconds ?? null}::int, duration_seconds),
        billed_minutes = COALESCE(${input.billedMinutes ?? null}::int, billed_minutes),
        updated_at = now()
      WHERE id = ${callId}::uuid`);
  }

  /** Whether a call's media stream ever started and whether it was priced yet (the ledger's side of a status callback). */
  async pricingState(tx: Tx, callId: string): Promise<{ streamStarted: boolean; priced: boolean }> {
    const call = await tx.call.findUniqueOrThrow({ where: { id: callId }, select: { streamStartedAt: true, cost: { select: { callId: true } } } });
    return { streamStarted: call.streamStartedAt !== null, priced: call.cost !== null };
  }

  /** The call as stored (inside a transaction: as this transaction sees it). */
  async read(db: Tx, id: string): Promise<CallRecord> {
    return toCallRecord(await db.call.findUniqueOrThrow({ where: { id }, omit: OMIT_INTERNAL_COLUMNS }));
  }

  /**
   * One page of the organization's calls, newest first (keyset pagination on createdAt, id),
   * optionally narrowed by filters. Filters narrow the rows; they never change the order, so a
   * filtered list pages exactly like an unfiltered one.
   */
  async list(input: ListCallsInput): Promise<CallPage> {
    const { organizationId, limit } = input;
    if (!Number.isInteger(limit) || limit < 1 || limit > CALL_LIST_MAX_LIMIT) {
      throw invalidInput(`limit must be an integer from 1 to ${CALL_LIST_MAX_LIMIT}`);
    }
    const after = input.cursor ? decodeCallCursor(input.cursor) : null;
    const filterWhere = callListFilterWhere(input.filters);
    if (!isUuid(organizationId)) return { items: [], nextCursor: null };
    const rows = await this.prisma.call.findMany({
      where: {
        organizationId,
        ...filterWhere,
        ...(after && {
          OR: [{ createdAt: { lt: after.createdAt } }, { createdAt: after.createdAt, id: { lt: after.id } }],
        }),
      },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: limit + 1,
      omit: OMIT_INTERNAL_COLUMNS,
    });
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      items: page.map(toCallRecord),
      nextCursor: rows.length > limit && last ? encodeCallCursor(last) : null,
    };
  }

  /**
   * The organization's calls whose row changed at or after `since` (started, answered, ended,
   * priced), oldest change first, at most `limit`: what a live view polls.
   */
  async listUpdatedSince(organizationId: string, since: Date, limit: number): Promise<CallRecord[]> {
    if (!isUuid(organizationId)) return [];
    const rows = await this.prisma.call.findMany({
      where: { organizationId, updatedAt: { gte: since } },
      orderBy: [{ updatedAt: 'asc' }, { id: 'asc' }],
      take: limit,
      omit: OMIT_INTERNAL_COLUMNS,
    });
    return rows.map(toCallRecord);
  }

  /**
   * The call with its event log and conversation records (transcript, tool invocations, latency
   * waterfalls), or null when missing or owned by another organization.
   */
  async findDetail(organizationId: string, id: string): Promise<CallDetail | null> {
    if (!isUuid(id) || !isUuid(organizationId)) return null;
    const row = await this.prisma.call.findFirst({
      where: { id, organizationId },
      omit: OMIT_INTERNAL_COLUMNS,
      include: {
        events: { orderBy: [{ at: 'asc' }, { id: 'asc' }] },
        transcriptTurns: { orderBy: { index: 'asc' } },
        // Parallel tool calls share a start offset: the tiebreakers only make the order stable.
        toolInvocations: { orderBy: [{ startedAtMs: 'asc' }, { createdAt: 'asc' }, { id: 'asc' }] },
        turnLatencies: { orderBy: { turnIndex: 'asc' } },
      },
    });
    if (!row) return null;
    const { events, transcriptTurns, toolInvocations, turnLatencies, ...call } = row;
    return {
      ...toCallRecord(call),
      events: events.map(toCallEventRecord),
      transcript: transcriptTurns.map(toTranscriptTurnRecord),
      toolInvocations: toolInvocations.map(toToolInvocationRecord),
      latency: turnLatencies.map(toTurnLatencyRecord),
    };
  }

  /** Internal lookup (media path) not scoped to an organization. */
  async findById(id: string): Promise<CallRecord | null> {
    if (!isUuid(id)) return null;
    const row = await this.prisma.call.findUnique({ where: { id }, omit: OMIT_INTERNAL_COLUMNS });
    return row ? toCallRecord(row) : null;
  }

  /** Stores the CallSid Twilio's calls.create answered with; false when the call already has another. */
  async attachTwilioCallSid(callId: string, twilioCallSid: string): Promise<boolean> {
    if (!isUuid(callId) || twilioCallSid.trim().length === 0) return false;
    const { count } = await this.prisma.call.updateMany({
      where: { id: callId, direction: 'outbound', OR: [{ twilioCallSid: null }, { twilioCallSid }] },
      data: { twilioCallSid },
    });
    return count === 1;
  }

  /** Twilio never placed the call (calls.create refused or unreachable): its status becomes 'failed'. */
  async markOutboundFailed(callId: string, at: Date): Promise<void> {
    if (!isUuid(callId)) return;
    const entry = JSON.stringify({ status: 'failed', at: at.toISOString(), sequenceNumber: null });
    await this.prisma.$executeRaw(Prisma.sql`
      UPDATE calls SET status = 'failed', status_timeline = status_timeline || jsonb_build_array(${entry}::jsonb), updated_at = now()
      WHERE id = ${callId}::uuid AND direction = 'outbound' AND end_reason IS NULL`);
  }

  /**
   * Twilio fetches an outbound call's TwiML when the callee answers: that is when the single-use
   * stream token is minted (a token minted at dial time could expire while the phone rings). Only
   * for the call Twilio names (its CallSid is stored here if calls.create has not answered yet),
   * of the account that placed it, before its stream started and while it is not over. A repeated
   * fetch replaces the token. Returns null when the token cannot be issued.
   */
  async issueOutboundStreamToken(input: IssueOutboundStreamTokenInput): Promise<CallRecord | null> {
    const { callId, twilioCallSid } = input;
    if (!isUuid(callId) || twilioCallSid.trim().length === 0) return null;
    const { count } = await this.prisma.call.updateMany({
      where: {
        id: callId,
        direction: 'outbound',
        twilioAccountSid: input.twilioAccountSid,
        OR: [{ twilioCallSid: null }, { twilioCallSid }],
        streamStartedAt: null,
        endReason: null,
        endedAt: null,
      },
      data: {
        twilioCallSid,
        streamTokenHash: input.streamTokenHash,
        streamTokenExpiresAt: input.streamTokenExpiresAt,
        streamTokenUsedAt: null,
      },
    });
    return count === 1 ? this.findById(callId) : null;
  }

  /**
   * Records Twilio's answering-machine verdict (AnsweredBy) and an 'amd_result' call event, in one
   * transaction. Returns the call's id and organization, or null when no call has this CallSid.
   */
  async recordAnsweredBy(input: AnsweredByInput): Promise<{ callId: string; organizationId: string | null } | null> {
    if (input.answeredBy.trim().length === 0) throw invalidInput('answeredBy must not be empty');
    return this.prisma.$transaction(async (tx) => {
      const rows = await tx.$queryRaw<Array<{ id: string; organization_id: string | null; started_at: Date }>>(Prisma.sql`
        UPDATE calls SET answered_by = ${input.answeredBy}, updated_at = now()
        WHERE twilio_call_sid = ${input.twilioCallSid}
        RETURNING id, organization_id, started_at`);
      const row = rows[0];
      if (!row) return null;
      await tx.callEvent.create({
        data: {
          callId: row.id,
          at: input.at,
          offsetMs: Math.round(input.at.getTime() - new Date(row.started_at).getTime()),
          type: 'amd_result',
          payload: { answeredBy: input.answeredBy, detectionDurationMs: input.detectionDurationMs ?? null },
        },
      });
      return { callId: row.id, organizationId: row.organization_id };
    });
  }

  /** The organization's call without its conversation records, or null when missing or another organization's. */
  async findForOrganization(organizationId: string, id: string): Promise<CallRecord | null> {
    if (!isUuid(id) || !isUuid(organizationId)) return null;
    const row = await this.prisma.call.findFirst({ where: { id, organizationId }, omit: OMIT_INTERNAL_COLUMNS });
    return row ? toCallRecord(row) : null;
  }

  /** The Twilio account of the call with this CallSid (which account's webhooks may speak for it), or null. */
  async accountOfCallSid(twilioCallSid: string): Promise<string | null> {
    const row = await this.prisma.call.findUnique({ where: { twilioCallSid }, select: { twilioAccountSid: true } });
    return row?.twilioAccountSid ?? null;
  }
}

export function assertCallIdentity(input: TwilioCallIdentity): void {
  for (const field of ['twilioCallSid', 'twilioAccountSid', 'fromNumber', 'toNumber'] as const) {
    if (input[field].trim().length === 0) throw invalidInput(`${field} must not be empty`);
  }
  if (!isTwilioCallStatus(input.status)) throw invalidInput(`Unknown Twilio CallStatus '${input.status}'`);
}

/** The columns every call answered from a Twilio webhook starts with. */
export function callIdentityData(input: TwilioCallIdentity) {
  const startedAt = input.at ?? new Date();
  return {
    twilioCallSid: input.twilioCallSid,
    twilioAccountSid: input.twilioAccountSid,
    direction: 'inbound',
    fromNumber: input.fromNumber,
    toNumber: input.toNumber,
    status: input.status,
    startedAt,
    statusTimeline: [{ status: input.status, at: startedAt.toISOString(), sequenceNumber: null }],
  } satisfies Partial<Prisma.CallUncheckedCreateInput>;
}
