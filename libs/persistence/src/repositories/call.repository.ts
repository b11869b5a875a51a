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
  toCallRecordVariables,
  toCallRecord,
} from './call-records';
import { isTwilioCallStatus, TERMINAL_CALL_STATUSES } from './call-status';
import type { AnsweredByInput, IssueOutboundStreamTokenInput } from './call-admission';
import { toToolInvocationRecord, toTranscriptTurnRecord, toTurnLatencyRecord } from './conversation-records';
import type { AgentEngine } from './agent.repository';
import type { JsonValue } from './json';

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

/** What the media path needs once a stream is authorised. */
export interface StreamCallContext {
  callId: string;
  organizationId: string;
  agentId: string;
  agentEngine: AgentEngine;
  /** The config version the call was answered with (not necessarily the agent's current one). */
  agentConfigVersion: number;
  agentConfig: JsonValue;
  twilioCallSid: string;
  /** The Twilio account the call belongs to (the media socket must have been signed by it). */
  twilioAccountSid: string;
  fromNumber: string;
  toNumber: string;
  /** calls.started_at: the origin of every offset recorded for the call. */
  startedAt: Date;
  /** Per-call variables from POST /v1/calls ({} for inbound calls). */
  variables: Record<string, string>;
  /** Twilio's answering-machine verdict, when it was known as the stream started (async AMD may come later). */
  answeredBy: string | null;
}

export type StreamTokenOutcome = 'ok' | 'missing' | 'reused' | 'expired' | 'mismatch' | 'wrong_account';

/**
 * Which Twilio account signed the media socket: an organization's own account (its calls only), or
 * the operator's (calls of accounts no organization registered, i.e. the bootstrap organization's).
 */
export type StreamAccount = { kind: 'operator' } | { kind: 'organization'; accountSid: string };

export type StreamClaim =
  | { outcome: 'ok'; context: StreamCallContext }
  | { outcome: Exclude<StreamTokenOutcome, 'ok'> };

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
}

/** A call the reconciler looks at: not ended, and its media quiet (or never started) for too long. */
export interface QuietCall {
  id: string;
  organizationId: string | null;
  twilioCallSid: string | null;
  twilioAccountSid: string;
  status: string;
  streamStartedAt: Date | null;
  mediaSeenAt: Date | null;
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
    const rows = await tx.$queryRaw<Array<{ id: string; answered_at: Date | null; ended_at: Date | null; end_reason: string | null }>>(
      Prisma.sql`SELECT id, answered_at, ended_at, end_reason FROM calls WHERE ${where} FOR UPDATE`,
    );
    const row = rows[0];
    return row ? { id: row.id, answeredAt: row.answered_at, endedAt: row.ended_at, endReason: row.end_reason } : null;
  }

  /** Gives a locked call its end reason; endedAt keeps the earliest time seen (Twilio's or ours). */
  async setEndReason(tx: Tx, callId: string, endReason: string, endedAt: Date): Promise<void> {
    await tx.$executeRaw(Prisma.sql`
      UPDATE calls
      SET end_reason = ${endReason},
          ended_at = LEAST(ended_at, ${endedAt.toISOString()}::timestamptz),
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
   * Claims the call's media stream with its single-use token, in ONE atomic statement: spends the
   * token, records the stream's start (the first start wins) and returns what the media path needs
   * to run the agent (the agent, its engine and the exact config version the call was answered
   * with). One round trip, because caller audio is being held while this runs. Concurrent sockets
   * presenting the same token: exactly one gets 'ok'. A refusal never spends the token or touches
   * the call, which may be live on another socket.
   */
  async claimMediaStream(input: { callId: string; tokenHash: string; streamSid: string; now: Date; account?: StreamAccount }): Promise<StreamClaim> {
    const { callId, tokenHash, streamSid, now } = input;
    if (!isUuid(callId)) return { outcome: 'missing' };
    const nowIso = now.toISOString();
    const accountMatches = streamAccountCondition(input.account ?? { kind: 'operator' });
    const rows = await this.prisma.$queryRaw<
      Array<{
        organization_id: string;
        agent_id: string;
        engine: string;
        version: number;
        config: JsonValue;
        twilio_call_sid: string;
        twilio_account_sid: string;
        from_number: string;
        to_number: string;
        started_at: Date;
        variables: JsonValue;
        answered_by: string | null;
      }>
    >(Prisma.sql`
      WITH claimed AS (
        UPDATE calls
        SET stream_token_used_at = ${nowIso}::timestamptz,
            twilio_stream_sid = COALESCE(twilio_stream_sid, ${streamSid}),
            stream_started_at = COALESCE(stream_started_at, ${nowIso}::timestamptz),
            media_seen_at = ${nowIso}::timestamptz,
            updated_at = now()
        WHERE id = ${callId}::uuid
          AND stream_token_hash = ${tokenHash}
          AND stream_token_used_at IS NULL
          AND stream_token_expires_at > ${nowIso}::timestamptz
          AND ${accountMatches}
        RETURNING organization_id, agent_id, agent_config_version, twilio_call_sid, twilio_account_sid, from_number, to_number,
                  started_at, variables, answered_by
      )
      SELECT c.organization_id, a.id AS agent_id, a.engine, v.version, v.config,
             c.twilio_call_sid, c.twilio_account_sid, c.from_number, c.to_number, c.started_at, c.variables, c.answered_by
      FROM claimed c
      JOIN agents a ON a.id = c.agent_id
      JOIN agent_config_versions v ON v.agent_id = c.agent_id AND v.version = c.agent_config_version`);
    const row = rows[0];
    if (row) {
      return {
        outcome: 'ok',
        context: {
          callId,
          organizationId: row.organization_id,
          agentId: row.agent_id,
          agentEngine: row.engine as AgentEngine,
          agentConfigVersion: row.version,
          agentConfig: row.config,
          twilioCallSid: row.twilio_call_sid,
          twilioAccountSid: row.twilio_account_sid,
          fromNumber: row.from_number,
          toNumber: row.to_number,
          startedAt: new Date(row.started_at),
          variables: toCallRecordVariables(row.variables),
          answeredBy: row.answered_by,
        },
      };
    }
    // Refused: say why (for the log), from a plain read that changes nothing.
    const refused = await this.prisma.$queryRaw<Array<{ token_hash: string | null; used: boolean; account_matches: boolean }>>(Prisma.sql`
      SELECT stream_token_hash AS token_hash, stream_token_used_at IS NOT NULL AS used, ${accountMatches} AS account_matches
      FROM calls WHERE id = ${callId}::uuid`);
    const call = refused[0];
    if (!call || call.token_hash === null) return { outcome: 'missing' };
    if (call.token_hash !== tokenHash) return { outcome: 'mismatch' };
    if (!call.account_matches) return { outcome: 'wrong_account' };
    if (call.used) return { outcome: 'reused' };
    return { outcome: 'expired' };
  }

  /** Notes the media stream's end; the first end wins. Returns false when nothing changed. */
  async markStreamEnded(callId: string, at: Date): Promise<boolean> {
    if (!isUuid(callId)) return false;
    const { count } = await this.prisma.call.updateMany({
      where: { id: callId, streamEndedAt: null },
      data: { streamEndedAt: at },
    });
    return count === 1;
  }

  /**
   * The media heartbeat: the process carrying these calls' streams is alive. One statement for all
   * of a process's live calls, so a heartbeat costs one round trip whatever the number of calls.
   */
  async touchMediaSeen(callIds: readonly string[], at: Date): Promise<void> {
    const ids = callIds.filter(isUuid);
    if (ids.length === 0) return;
    await this.prisma.$executeRaw(Prisma.sql`
      UPDATE calls SET media_seen_at = ${at.toISOString()}::timestamptz
      WHERE id = ANY(${ids}::uuid[]) AND ended_at IS NULL AND end_reason IS NULL`);
  }

  /**
   * Calls that have not ended although nothing has carried them for a while: their media stream
   * started but has not been seen since `quietSince` (the process that carried it died, or could
   * not write its end), or it never started and the token it needed expired before `quietSince`.
   * Oldest first, at most `limit`.
   */
  async findQuiet(quietSince: Date, limit: number): Promise<QuietCall[]> {
    const since = quietSince.toISOString();
    const rows = await this.prisma.$queryRaw<
      Array<{
        id: string;
        organization_id: string | null;
        twilio_call_sid: string | null;
        twilio_account_sid: string;
        status: string;
        stream_started_at: Date | null;
        media_seen_at: Date | null;
      }>
    >(Prisma.sql`
      SELECT id, organization_id, twilio_call_sid, twilio_account_sid, status, stream_started_at, media_seen_at
      FROM calls
      WHERE ended_at IS NULL AND end_reason IS NULL
        AND (
          (stream_started_at IS NOT NULL AND COALESCE(media_seen_at, stream_started_at) < ${since}::timestamptz)
          OR (stream_started_at IS NULL AND stream_token_expires_at IS NOT NULL AND stream_token_expires_at < ${since}::timestamptz)
        )
      ORDER BY COALESCE(media_seen_at, stream_started_at, stream_token_expires_at)
      LIMIT ${limit}`);
    return rows.map((row) => ({
      id: row.id,
      organizationId: row.organization_id,
      twilioCallSid: row.twilio_call_sid,
      twilioAccountSid: row.twilio_account_sid,
      status: row.status,
      streamStartedAt: row.stream_started_at,
      mediaSeenAt: row.media_seen_at,
    }));
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

/** SQL over `calls` (unaliased): the call belongs to the account that signed its media socket. */
function streamAccountCondition(account: StreamAccount): Prisma.Sql {
  if (account.kind === 'organization') return Prisma.sql`calls.twilio_account_sid = ${account.accountSid}`;
  return Prisma.sql`NOT EXISTS (SELECT 1 FROM organization_twilio_accounts t WHERE t.account_sid = calls.twilio_account_sid)`;
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
