import { Injectable, Optional } from '@nestjs/common';
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
  toCallRecordVariables,
  toCallRecord,
} from './call-records';
import { isTerminalCallStatus, isTwilioCallStatus, TERMINAL_CALL_STATUSES } from './call-status';
import {
  admissionRefusal,
  CONCURRENCY_LIMIT_REASON,
  lockOrganizationCalls,
  readConcurrency,
  recordRefusal,
  type Admission,
  type AnsweredByInput,
  type Refusal,
  type CreateOutboundCallInput,
  type IssueOutboundStreamTokenInput,
} from './call-admission';
import { toToolInvocationRecord, toTranscriptTurnRecord, toTurnLatencyRecord } from './conversation-records';
import type { AgentEngine } from './agent.repository';
import type { JsonValue } from './json';
import { WebhookOutbox } from '../webhooks/webhook-outbox';
import { NO_MEASURED_USAGE, type MeasuredCallUsage } from '@switchboard/billing';
import { CostLedger } from '../billing/cost-ledger';
import { BUDGET_EXCEEDED_REASON, budgetStatusAt } from '../billing/budgets';
import { callEventData } from '../webhooks/webhook-payloads';
import type { WebhookEventType } from '../webhooks/webhook-event-types';

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
  /** Per-call variables from POST /v1/calls ({} for inbound calls). */
  variables: Record<string, string>;
  /** Twilio's answering-machine verdict, when it was known as the stream started (async AMD may come later). */
  answeredBy: string | null;
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
  private readonly outbox: WebhookOutbox;
  private readonly ledger: CostLedger;

  constructor(
    private readonly prisma: PrismaService,
    @Optional() outbox?: WebhookOutbox,
  ) {
    this.outbox = outbox ?? new WebhookOutbox();
    this.ledger = new CostLedger(this.outbox);
  }

  /** Records an answered inbound call, with the hash of the token its media stream must present. */
  async createInbound(input: CreateInboundCallInput): Promise<CallRecord> {
    assertIdentity(input);
    if (!isUuid(input.organizationId) || !isUuid(input.agentId)) throw invalidInput('Invalid organization or agent id');
    try {
      const call = await this.prisma.$transaction((tx) => this.createInboundInTransaction(tx, input));
      // Nudge the webhook worker (call.started) now that the transaction has committed.
      this.outbox.committed(1);
      return call;
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
        variables: JsonValue;
        answered_by: string | null;
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
        RETURNING organization_id, agent_id, agent_config_version, twilio_call_sid, from_number, to_number, started_at,
                  variables, answered_by
      )
      SELECT c.organization_id, a.id AS agent_id, a.engine, v.version, v.config,
             c.twilio_call_sid, c.from_number, c.to_number, c.started_at, c.variables, c.answered_by
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
          variables: toCallRecordVariables(row.variables),
          answeredBy: row.answered_by,
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
   * Records why the call ended. Idempotent: the first end reason wins and later calls change nothing
   * about the call (returns false), though their `usage` still reaches its ledger. endedAt keeps the
   * earliest time seen, whether it came from here or from Twilio's terminal status callback. Emits call.ended when this is the call's first end
   * (see enqueueEndedIfFirstEnd), in the same transaction. The call's cost ledger is written in that
   * same transaction too, from `usage` (what the media path measured) and the call row.
   */
  async finalise(callId: string, end: { endReason: string; endedAt: Date; usage?: MeasuredCallUsage }): Promise<boolean> {
    if (!isUuid(callId)) return false;
    if (end.endReason.trim().length === 0) throw invalidInput('endReason must not be empty');
    const { applied, deliveries } = await this.prisma.$transaction(async (tx) => {
      const before = await lockCall(tx, Prisma.sql`id = ${callId}::uuid`);
      if (!before) return { applied: false, deliveries: 0 };
      // Already ended by someone else (an API hang-up): the end reason stays, but what the media path
      // measured still reaches the ledger (as a correction when the call was priced without it).
      if (before.endReason !== null) return { applied: false, deliveries: end.usage ? await this.ledger.charge(tx, callId, end.usage) : 0 };
      await tx.$executeRaw(Prisma.sql`
        UPDATE calls
        SET end_reason = ${end.endReason},
            ended_at = LEAST(ended_at, ${end.endedAt.toISOString()}::timestamptz),
            updated_at = now()
        WHERE id = ${callId}::uuid`);
      const ended = await this.enqueueEndedIfFirstEnd(tx, before);
      return { applied: true, deliveries: ended + (await this.ledger.charge(tx, callId, end.usage ?? NO_MEASURED_USAGE)) };
    });
    this.outbox.committed(deliveries);
    return applied;
  }

  /**
   * Applies a Twilio status callback in one UPDATE of the locked row (callbacks for a call may arrive
   * concurrently and out of order):
   *  - the callback is always added to the timeline;
   *  - `status` moves only to a newer SequenceNumber, and never from a terminal status back to
   *    a non-terminal one (the only guard when Twilio sends no sequence numbers);
   *  - answeredAt / endedAt keep the earliest 'in-progress' / terminal time;
   *  - durations are set when present;
   *  - the first 'in-progress' (answeredAt was unset) emits call.answered, and a terminal status
   *    that is the call's first end emits call.ended, in the same transaction.
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
    const { found, deliveries } = await this.prisma.$transaction(async (tx) => {
      // Locked first so that the old answered_at / ended_at decide, race-free, whether this
      // callback is the one that answered or ended the call (each emits its webhook event once).
      const before = await lockCall(tx, Prisma.sql`twilio_call_sid = ${twilioCallSid}`);
      if (!before) return { found: false, deliveries: 0 };
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
      WHERE id = ${before.id}::uuid`);
      let enqueued = 0;
      if (status === 'in-progress' && before.answeredAt === null) {
        enqueued += await this.enqueueCallEvent(tx, 'call.answered', await this.readCall(tx, before.id));
      }
      if (isTerminalCallStatus(status)) enqueued += await this.enqueueEndedIfFirstEnd(tx, before);
      enqueued += await this.priceOnStatus(tx, before.id, isTerminalCallStatus(status), input.billedMinutes !== undefined);
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
  private async priceOnStatus(tx: Prisma.TransactionClient, callId: string, terminal: boolean, billedMinutesSent: boolean): Promise<number> {
    const call = await tx.call.findUniqueOrThrow({ where: { id: callId }, select: { streamStartedAt: true, cost: { select: { callId: true } } } });
    if (call.cost) return billedMinutesSent ? this.ledger.correct(tx, callId, 'twilio_billed_duration') : 0;
    if (terminal && call.streamStartedAt === null) return this.ledger.charge(tx, callId, NO_MEASURED_USAGE);
    return 0;
  }

  /**
   * call.ended is emitted exactly once per call, by whichever write first gives the call an
   * ended_at: Switchboard's finalise (media path) or Twilio's terminal status callback, whichever
   * commits first. Both lock the row before reading ended_at, so they cannot both see it unset.
   * The event carries the call as it stood then: endReason may still be null (Twilio was first)
   * or durationSeconds not yet known (finalise was first).
   */
  private async enqueueEndedIfFirstEnd(tx: Prisma.TransactionClient, before: LockedCall): Promise<number> {
    if (before.endedAt !== null) return 0;
    const after = await this.readCall(tx, before.id);
    return after.endedAt === null ? 0 : this.enqueueCallEvent(tx, 'call.ended', after);
  }

  private async enqueueCallEvent(tx: Prisma.TransactionClient, type: WebhookEventType, call: CallRecord): Promise<number> {
    // A call no organization owns (unknown number) has nobody to notify.
    if (call.organizationId === null) return 0;
    return this.outbox.enqueue(tx, [{ organizationId: call.organizationId, type, callId: call.id, data: callEventData(call) }]);
  }

  private async readCall(tx: Prisma.TransactionClient, id: string): Promise<CallRecord> {
    return toCallRecord(await tx.call.findUniqueOrThrow({ where: { id }, omit: OMIT_STREAM_TOKEN }));
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

  /**
   * Records an answered inbound call inside the caller's transaction (the concurrency check, and
   * anything else that must commit with the call, share it).
   */
  async createInboundInTransaction(tx: Prisma.TransactionClient, input: CreateInboundCallInput): Promise<CallRecord> {
    assertIdentity(input);
    if (!isUuid(input.organizationId) || !isUuid(input.agentId)) throw invalidInput('Invalid organization or agent id');
    const call = await this.insert(
      {
        ...identityData(input),
        organizationId: input.organizationId,
        agentId: input.agentId,
        agentConfigVersion: input.agentConfigVersion,
        streamTokenHash: input.streamTokenHash,
        streamTokenExpiresAt: input.streamTokenExpiresAt,
      },
      tx,
    );
    // The call and its call.started webhook event commit together (transactional outbox).
    await this.enqueueCallEvent(tx, 'call.started', call);
    return call;
  }

  /**
   * createInbound under the organization's concurrency limit, decided in ONE transaction holding
   * the organization's advisory lock (count + insert cannot interleave with another admission).
   * Over the limit the call is stored as rejected (end reason 'concurrency_limit') and counted in
   * call_refusals. A Twilio retry of a webhook already answered gets the same answer again: the
   * admitted call with a fresh token, or the refusal (counted once).
   */
  async createInboundWithinLimit(input: CreateInboundCallInput & { defaultConcurrencyLimit: number }): Promise<Admission<CallRecord>> {
    assertIdentity(input);
    if (!isUuid(input.organizationId) || !isUuid(input.agentId)) throw invalidInput('Invalid organization or agent id');
    const outcome = await this.prisma.$transaction(async (tx): Promise<Admission<CallRecord> | 'retry'> => {
      await lockOrganizationCalls(tx, input.organizationId);
      const data = identityData(input);
      const earlier = await tx.call.findUnique({ where: { twilioCallSid: input.twilioCallSid }, select: { endReason: true } });
      // A Twilio retry of a refused call is refused again, for the reason it was (counted once).
      if (earlier && isRefusalReason(earlier.endReason)) return { admitted: false, ...(await repeatedRefusal(tx, input, earlier.endReason, data.startedAt)) };
      if (earlier) return 'retry';
      const refusal = await admissionRefusal(tx, input.organizationId, input.defaultConcurrencyLimit, data.startedAt);
      if (refusal) {
        await this.insert(
          { ...data, organizationId: input.organizationId, agentId: input.agentId, endReason: refusal.reason, endedAt: data.startedAt },
          tx,
        );
        await recordRefusal(tx, { organizationId: input.organizationId, direction: 'inbound', fromNumber: input.fromNumber, toNumber: input.toNumber, refusal, at: data.startedAt });
        return { admitted: false, ...refusal };
      }
      return { admitted: true, call: await this.createInboundInTransaction(tx, input) };
    });
    if (outcome === 'retry') return { admitted: true, call: await this.reissueStreamToken(input) };
    // Nudge the webhook worker (call.started) now that the transaction has committed.
    if (outcome.admitted) this.outbox.committed(1);
    return outcome;
  }

  /**
   * Reserves an outbound call's place under the concurrency limit (same lock and count as
   * createInboundWithinLimit) BEFORE Twilio is asked to dial: the row is live from here on, with no
   * CallSid until attachTwilioCallSid. Over the limit nothing is stored but the call_refusals row.
   */
  async createOutboundWithinLimit(input: CreateOutboundCallInput): Promise<Admission<CallRecord>> {
    if (!isUuid(input.organizationId) || !isUuid(input.agentId)) throw invalidInput('Invalid organization or agent id');
    for (const field of ['twilioAccountSid', 'fromNumber', 'toNumber'] as const) {
      if (input[field].trim().length === 0) throw invalidInput(`${field} must not be empty`);
    }
    const startedAt = input.at ?? new Date();
    const outcome = await this.prisma.$transaction(async (tx): Promise<Admission<CallRecord>> => {
      await lockOrganizationCalls(tx, input.organizationId);
      const refusal = await admissionRefusal(tx, input.organizationId, input.defaultConcurrencyLimit, startedAt);
      if (refusal) {
        await recordRefusal(tx, { organizationId: input.organizationId, direction: 'outbound', fromNumber: input.fromNumber, toNumber: input.toNumber, refusal, at: startedAt });
        return { admitted: false, ...refusal };
      }
      const call = await this.insert(
        {
          twilioCallSid: null,
          twilioAccountSid: input.twilioAccountSid,
          direction: 'outbound',
          fromNumber: input.fromNumber,
          toNumber: input.toNumber,
          status: 'queued',
          startedAt,
          statusTimeline: [{ status: 'queued', at: startedAt.toISOString(), sequenceNumber: null }],
          organizationId: input.organizationId,
          agentId: input.agentId,
          agentConfigVersion: input.agentConfigVersion,
          variables: input.variables,
          machineDetection: input.machineDetection,
        },
        tx,
      );
      // The reserved call and its call.started webhook event commit together (transactional outbox).
      await this.enqueueCallEvent(tx, 'call.started', call);
      return { admitted: true, call };
    });
    if (outcome.admitted) this.outbox.committed(1);
    return outcome;
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
   * before its stream started and while it is not over. A repeated fetch replaces the token.
   * Returns null when the token cannot be issued.
   */
  async issueOutboundStreamToken(input: IssueOutboundStreamTokenInput): Promise<CallRecord | null> {
    const { callId, twilioCallSid } = input;
    if (!isUuid(callId) || twilioCallSid.trim().length === 0) return null;
    const { count } = await this.prisma.call.updateMany({
      where: {
        id: callId,
        direction: 'outbound',
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
    const row = await this.prisma.call.findFirst({ where: { id, organizationId }, omit: OMIT_STREAM_TOKEN });
    return row ? toCallRecord(row) : null;
  }

  private async insert(data: Prisma.CallUncheckedCreateInput, db: Prisma.TransactionClient = this.prisma): Promise<CallRecord> {
    try {
      return toCallRecord(await db.call.create({ data, omit: OMIT_STREAM_TOKEN }));
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw new PersistenceError('conflict', `A call with CallSid ${data.twilioCallSid} is already recorded`);
      }
      throw error;
    }
  }
}

interface LockedCall {
  id: string;
  answeredAt: Date | null;
  endedAt: Date | null;
  endReason: string | null;
}

function isRefusalReason(reason: string | null): reason is Refusal['reason'] {
  return reason === CONCURRENCY_LIMIT_REASON || reason === BUDGET_EXCEEDED_REASON;
}

/** The refusal a retried webhook gets again, described with today's numbers even if they would now admit it. */
async function repeatedRefusal(
  tx: Prisma.TransactionClient,
  input: { organizationId: string; defaultConcurrencyLimit: number },
  reason: Refusal['reason'],
  at: Date,
): Promise<Refusal> {
  if (reason === CONCURRENCY_LIMIT_REASON) return { reason, snapshot: await readConcurrency(tx, input.organizationId, input.defaultConcurrencyLimit) };
  const budget = await budgetStatusAt(tx, input.organizationId, at);
  if (!budget) throw new PersistenceError('not_found', `Organization ${input.organizationId} does not exist`);
  return { reason, budget };
}

/** Row-locks one call for the rest of the transaction and returns what it was before this write. */
async function lockCall(tx: Prisma.TransactionClient, where: Prisma.Sql): Promise<LockedCall | null> {
  const rows = await tx.$queryRaw<Array<{ id: string; answered_at: Date | null; ended_at: Date | null; end_reason: string | null }>>(
    Prisma.sql`SELECT id, answered_at, ended_at, end_reason FROM calls WHERE ${where} FOR UPDATE`,
  );
  const row = rows[0];
  return row ? { id: row.id, answeredAt: row.answered_at, endedAt: row.ended_at, endReason: row.end_reason } : null;
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
