// The calls table as one injectable: inserts, lookups and outbound-call writes here; lists, detail and lifecycle writes delegated.
import { Injectable } from '@nestjs/common';
import { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../prisma.service';
import { isUniqueViolation } from '../database-errors';
import { invalidInput, PersistenceError } from '../persistence.errors';
import type { Tx } from '../transaction-runner';
import { isUuid } from '../uuid';
import type { AnsweredByInput, IssueOutboundStreamTokenInput } from './call-admission';
import type { CreateInboundCallInput } from './call-identity';
import { applyCallStatus, lockCall, setCallEndReason, type LockedCall, type StatusCallbackInput } from './call-lifecycle-writes';
import { findCallDetail, listCalls, listCallsUpdatedSince, type ListCallsInput } from './call-queries';
import { CallDetail, CallPage, CallRecord, OMIT_INTERNAL_COLUMNS, toCallRecord } from './call-records';

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

  /** Row-locks one call for the rest of the transaction and returns what it was before this write (see lockCall). */
  lock(tx: Tx, by: { id: string } | { twilioCallSid: string }): Promise<LockedCall | null> {
    return lockCall(tx, by);
  }

  /** Gives a locked call its end reason (see setCallEndReason). */
  setEndReason(tx: Tx, callId: string, endReason: string, endedAt: Date): Promise<void> {
    return setCallEndReason(tx, callId, endReason, endedAt);
  }

  /** Applies a Twilio status callback to a locked call (see applyCallStatus for the ordering rules). */
  applyStatus(tx: Tx, callId: string, input: StatusCallbackInput): Promise<void> {
    return applyCallStatus(tx, callId, input);
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

  /** One page of the organization's calls, newest first, optionally filtered (see listCalls). */
  list(input: ListCallsInput): Promise<CallPage> {
    return listCalls(this.prisma, input);
  }

  /** The organization's calls changed at or after `since`, oldest change first (see listCallsUpdatedSince). */
  listUpdatedSince(organizationId: string, since: Date, limit: number): Promise<CallRecord[]> {
    return listCallsUpdatedSince(this.prisma, organizationId, since, limit);
  }

  /** The call with its event log and conversation records, or null (see findCallDetail). */
  findDetail(organizationId: string, id: string): Promise<CallDetail | null> {
    return findCallDetail(this.prisma, organizationId, id);
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
