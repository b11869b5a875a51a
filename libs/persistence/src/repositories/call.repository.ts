import { Injectable } from '@nestjs/common';
import { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../prisma.service';
import { isUniqueViolation } from '../database-errors';
import { invalidInput, PersistenceError } from '../persistence.errors';
import { isUuid } from '../uuid';
import { decodeCallCursor, encodeCallCursor } from './call-cursor';
import { callListFilterWhere, type CallListFilters } from './call-list-filters';
import {
  CallDetail,
  CallPage,
  CallRecord,
  OMIT_STREAM_TOKEN,
  toCallEventRecord,
  toCallRecord,
} from './call-records';
import { isTwilioCallStatus, TERMINAL_CALL_STATUSES } from './call-status';
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
  fromNumber: string;
  toNumber: string;
  /** calls.started_at: the origin of every offset recorded for the call. */
  startedAt: Date;
}

export type StreamTokenOutcome = 'ok' | 'missing' | 'reused' | 'expired' | 'mismatch';

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

@Injectable()
export class CallRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Records an answered inbound call, with the hash of the token its media stream must present. */
  async createInbound(input: CreateInboundCallInput): Promise<CallRecord> {
    assertIdentity(input);
    if (!isUuid(input.organizationId) || !isUuid(input.agentId)) throw invalidInput('Invalid organization or agent id');
    try {
      return await this.insert({
        ...identityData(input),
        organizationId: input.organizationId,
        agentId: input.agentId,
        agentConfigVersion: input.agentConfigVersion,
        streamTokenHash: input.streamTokenHash,
        streamTokenExpiresAt: input.streamTokenExpiresAt,
      });
    } catch (error) {
      if (!(error instanceof PersistenceError && error.code === 'conflict')) throw error;
      return this.reissueStreamToken(input);
    }
  }

  /**
   * Twilio retries the voice webhook when our answer was slow or lost. While the call's stream has
   * not started, the retry gets the same call with a fresh token (the earlier one is void); after
   * that the CallSid is taken for good and the retry is a conflict.
   */
  private async reissueStreamToken(input: CreateInboundCallInput): Promise<CallRecord> {
    const { count } = await this.prisma.call.updateMany({
      where: { twilioCallSid: input.twilioCallSid, agentId: input.agentId, streamStartedAt: null, endReason: null },
      data: { streamTokenHash: input.streamTokenHash, streamTokenExpiresAt: input.streamTokenExpiresAt, streamTokenUsedAt: null },
    });
    const call = count === 1 ? await this.prisma.call.findUnique({ where: { twilioCallSid: input.twilioCallSid }, omit: OMIT_STREAM_TOKEN }) : null;
    if (!call) throw new PersistenceError('conflict', `A call with CallSid ${input.twilioCallSid} is already recorded`);
    return toCallRecord(call);
  }

  /** Records a call turned away on arrival (e.g. unknown number); it is final at once. */
  async createRejected(input: CreateRejectedCallInput): Promise<CallRecord> {
    assertIdentity(input);
    if (input.endReason.trim().length === 0) throw invalidInput('endReason must not be empty');
    const data = identityData(input);
    return this.insert({
      ...data,
      organizationId: input.organizationId ?? null,
      agentId: input.agentId ?? null,
      endReason: input.endReason,
      endedAt: data.startedAt,
    });
  }

  /**
   * Claims the call's media stream with its single-use token, in ONE atomic statement: spends the
   * token, records the stream's start (the first start wins) and returns what the media path needs
   * to run the agent (the agent, its engine and the exact config version the call was answered
   * with). One round trip, because caller audio is being held while this runs. Concurrent sockets
   * presenting the same token: exactly one gets 'ok'. A refusal never spends the token or touches
   * the call, which may be live on another socket.
   */
  async claimMediaStream(input: { callId: string; tokenHash: string; streamSid: string; now: Date }): Promise<StreamClaim> {
    const { callId, tokenHash, streamSid, now } = input;
    if (!isUuid(callId)) return { outcome: 'missing' };
    const nowIso = now.toISOString();
    const rows = await this.prisma.$queryRaw<
      Array<{
        organization_id: string;
        agent_id: string;
        engine: string;
        version: number;
        config: JsonValue;
        twilio_call_sid: string;
        from_number: string;
        to_number: string;
        started_at: Date;
      }>
    >(Prisma.sql`
      WITH claimed AS (
        UPDATE calls
        SET stream_token_used_at = ${nowIso}::timestamptz,
            twilio_stream_sid = COALESCE(twilio_stream_sid, ${streamSid}),
            stream_started_at = COALESCE(stream_started_at, ${nowIso}::timestamptz),
            updated_at = now()
        WHERE id = ${callId}::uuid
          AND stream_token_hash = ${tokenHash}
          AND stream_token_used_at IS NULL
          AND stream_token_expires_at > ${nowIso}::timestamptz
        RETURNING organization_id, agent_id, agent_config_version, twilio_call_sid, from_number, to_number, started_at
      )
      SELECT c.organization_id, a.id AS agent_id, a.engine, v.version, v.config,
             c.twilio_call_sid, c.from_number, c.to_number, c.started_at
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
          fromNumber: row.from_number,
          toNumber: row.to_number,
          startedAt: new Date(row.started_at),
        },
      };
    }
    // Refused: say why (for the log), from a plain read that changes nothing.
    const call = await this.prisma.call.findUnique({
      where: { id: callId },
      select: { streamTokenHash: true, streamTokenUsedAt: true },
    });
    if (!call || call.streamTokenHash === null) return { outcome: 'missing' };
    if (call.streamTokenHash !== tokenHash) return { outcome: 'mismatch' };
    if (call.streamTokenUsedAt !== null) return { outcome: 'reused' };
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
   * Records why the call ended. Idempotent: the first end reason wins and later calls change
   * nothing (returns false). endedAt keeps the earliest time seen, whether it came from here or
   * from Twilio's terminal status callback.
   */
  async finalise(callId: string, end: { endReason: string; endedAt: Date }): Promise<boolean> {
    if (!isUuid(callId)) return false;
    if (end.endReason.trim().length === 0) throw invalidInput('endReason must not be empty');
    const applied = await this.prisma.$executeRaw(Prisma.sql`
      UPDATE calls
      SET end_reason = ${end.endReason},
          ended_at = LEAST(ended_at, ${end.endedAt.toISOString()}::timestamptz),
          updated_at = now()
      WHERE id = ${callId}::uuid AND end_reason IS NULL`);
    return applied === 1;
  }

  /**
   * Applies a Twilio status callback in one UPDATE (callbacks for a call may arrive
   * concurrently and out of order):
   *  - the callback is always added to the timeline;
   *  - `status` moves only to a newer SequenceNumber, and never from a terminal status back to
   *    a non-terminal one (the only guard when Twilio sends no sequence numbers);
   *  - answeredAt / endedAt keep the earliest 'in-progress' / terminal time;
   *  - durations are set when present.
   * Returns false when no call has this CallSid.
   */
  async applyStatusCallback(input: StatusCallbackInput): Promise<boolean> {
    const { twilioCallSid, status, at } = input;
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
    const updated = await this.prisma.$executeRaw(Prisma.sql`
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
      WHERE twilio_call_sid = ${twilioCallSid}`);
    return updated === 1;
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
      omit: OMIT_STREAM_TOKEN,
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
      omit: OMIT_STREAM_TOKEN,
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
    const row = await this.prisma.call.findUnique({ where: { id }, omit: OMIT_STREAM_TOKEN });
    return row ? toCallRecord(row) : null;
  }

  private async insert(data: Prisma.CallUncheckedCreateInput): Promise<CallRecord> {
    try {
      return toCallRecord(await this.prisma.call.create({ data, omit: OMIT_STREAM_TOKEN }));
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw new PersistenceError('conflict', `A call with CallSid ${data.twilioCallSid} is already recorded`);
      }
      throw error;
    }
  }
}

function assertIdentity(input: TwilioCallIdentity): void {
  for (const field of ['twilioCallSid', 'twilioAccountSid', 'fromNumber', 'toNumber'] as const) {
    if (input[field].trim().length === 0) throw invalidInput(`${field} must not be empty`);
  }
  if (!isTwilioCallStatus(input.status)) throw invalidInput(`Unknown Twilio CallStatus '${input.status}'`);
}

function identityData(input: TwilioCallIdentity) {
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
