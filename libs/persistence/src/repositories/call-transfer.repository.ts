import { Injectable } from '@nestjs/common';
import { Prisma } from '../generated/prisma/client';
import type { CallTransfer } from '../generated/prisma/client';
import { invalidInput } from '../persistence.errors';
import { PrismaService } from '../prisma.service';
import { isUuid } from '../uuid';

/**
 * A warm transfer's steps: `holding` (the caller is in the conference, on hold) -> `dialing` (the
 * destination rings) -> `answered` (it picked up and hears the whisper) -> `connected` (it joined
 * the conference: the call is transferred). Or, from any of the first three, `returned` (nobody
 * answered: the caller went back to the agent) or `abandoned` (the caller hung up on hold, or the
 * caller could not be put on hold at all).
 */
export const CALL_TRANSFER_STATUSES = ['holding', 'dialing', 'answered', 'connected', 'returned', 'abandoned'] as const;
export type CallTransferStatus = (typeof CALL_TRANSFER_STATUSES)[number];

/** The transfer still waits for the destination: nothing has decided how it ends. */
export const OPEN_TRANSFER_STATUSES: readonly CallTransferStatus[] = ['holding', 'dialing', 'answered'];

export interface CallTransferRecord {
  id: string;
  callId: string;
  destination: string;
  status: CallTransferStatus;
  conferenceName: string;
  humanCallSid: string | null;
  whisper: 'summary' | 'none';
  summary: string | null;
  answerTimeoutS: number;
  createdAt: Date;
  updatedAt: Date;
  endedAt: Date | null;
}

/** What the transfer's callbacks need of its call: who may sign for it, and how to reach it. */
export interface TransferredCall {
  id: string;
  organizationId: string | null;
  direction: string;
  twilioCallSid: string | null;
  twilioAccountSid: string | null;
  fromNumber: string;
  toNumber: string;
  ended: boolean;
}

export interface NewCallTransfer {
  callId: string;
  destination: string;
  conferenceName: string;
  whisper: 'summary' | 'none';
  summary: string | null;
  answerTimeoutS: number;
}

/** A turn of the conversation as the whisper and a resumed agent read it back. */
export interface StoredTurn {
  index: number;
  role: 'user' | 'assistant';
  /** What the caller heard (an interrupted assistant turn's heard part). */
  text: string;
}

function toRecord(row: CallTransfer): CallTransferRecord {
  return { ...row, status: row.status as CallTransferStatus, whisper: row.whisper as 'summary' | 'none' };
}

@Injectable()
export class CallTransferRepository {
  constructor(private readonly prisma: PrismaService) {}

  async create(input: NewCallTransfer): Promise<CallTransferRecord> {
    if (!isUuid(input.callId)) throw invalidInput('Invalid call id');
    return toRecord(await this.prisma.callTransfer.create({ data: { ...input, status: 'holding' } }));
  }

  /** How many warm transfers the call has begun. */
  async countForCall(callId: string): Promise<number> {
    if (!isUuid(callId)) return 0;
    return this.prisma.callTransfer.count({ where: { callId } });
  }

  async findById(id: string): Promise<CallTransferRecord | null> {
    if (!isUuid(id)) return null;
    const row = await this.prisma.callTransfer.findUnique({ where: { id } });
    return row ? toRecord(row) : null;
  }

  /** The transfer's call, as its callbacks need it; null when either is unknown. */
  async callOf(transferId: string): Promise<{ transfer: CallTransferRecord; call: TransferredCall } | null> {
    if (!isUuid(transferId)) return null;
    const row = await this.prisma.callTransfer.findUnique({ where: { id: transferId }, include: { call: true } });
    if (!row) return null;
    const { call, ...transfer } = row;
    return {
      transfer: toRecord(transfer),
      call: {
        id: call.id,
        organizationId: call.organizationId,
        direction: call.direction,
        twilioCallSid: call.twilioCallSid,
        twilioAccountSid: call.twilioAccountSid,
        fromNumber: call.fromNumber,
        toNumber: call.toNumber,
        ended: call.endReason !== null || call.endedAt !== null,
      },
    };
  }

  /** The destination's CallSid once calls.create answered; only while the transfer is open. */
  async attachHumanCall(id: string, humanCallSid: string): Promise<boolean> {
    const { count } = await this.prisma.callTransfer.updateMany({
      where: { id, status: { in: [...OPEN_TRANSFER_STATUSES] } },
      data: { humanCallSid, updatedAt: new Date() },
    });
    return count === 1;
  }

  /**
   * Moves the transfer on, in one conditional statement: only from one of `from`, so of two
   * callbacks racing (a join and a timeout, two workers), exactly one wins. Returns the transfer as
   * it now is, or null when it was not in one of `from`.
   */
  async advance(id: string, from: readonly CallTransferStatus[], to: CallTransferStatus, at = new Date()): Promise<CallTransferRecord | null> {
    if (!isUuid(id)) return null;
    const ends = to === 'connected' || to === 'returned' || to === 'abandoned';
    const rows = await this.prisma.callTransfer.updateManyAndReturn({
      where: { id, status: { in: [...from] } },
      data: { status: to, updatedAt: at, ...(ends && { endedAt: at }) },
    });
    return rows[0] ? toRecord(rows[0]) : null;
  }

  /**
   * A fresh single-use stream token for a call that goes back to its agent after a transfer, while
   * the call is not over. Its stream already started once: the claim keeps the first stream's sid
   * and start time, and spends this token like any other.
   */
  async reissueStreamToken(callId: string, tokenHash: string, expiresAt: Date): Promise<boolean> {
    if (!isUuid(callId)) return false;
    const { count } = await this.prisma.call.updateMany({
      where: { id: callId, endReason: null, endedAt: null },
      data: { streamTokenHash: tokenHash, streamTokenExpiresAt: expiresAt, streamTokenUsedAt: null },
    });
    return count === 1;
  }

  /**
   * The conversation's last `limit` turns, oldest first, as the caller heard them, and the index
   * the next turn takes. One bounded read.
   */
  async recentTurns(callId: string, limit: number): Promise<{ turns: StoredTurn[]; nextIndex: number }> {
    if (!isUuid(callId)) return { turns: [], nextIndex: 0 };
    const rows = await this.prisma.$queryRaw<Array<{ index: number; role: string; text: string; heard_text: string | null; interrupted: boolean }>>(Prisma.sql`
      SELECT "index", role, text, heard_text, interrupted FROM transcript_turns
      WHERE call_id = ${callId}::uuid ORDER BY "index" DESC LIMIT ${limit}`);
    // Newest first as read: the next index follows the newest turn.
    const nextIndex = rows.length === 0 ? 0 : rows[0]!.index + 1;
    const turns = [...rows]
      .reverse()
      .map((row) => ({ index: row.index, role: row.role as 'user' | 'assistant', text: row.interrupted ? (row.heard_text ?? '') : row.text }))
      .filter((turn) => turn.text.trim().length > 0);
    return { turns, nextIndex };
  }
}
