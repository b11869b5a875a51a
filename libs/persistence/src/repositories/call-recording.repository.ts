import { Injectable } from '@nestjs/common';
import { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../prisma.service';
import { isUuid } from '../uuid';

export type CallRecordingStatus = 'recording' | 'available' | 'failed' | 'deleted';
export type RecordingStoreKind = 'local' | 's3';

export interface CallRecordingRecord {
  callId: string;
  organizationId: string;
  status: CallRecordingStatus;
  store: RecordingStoreKind;
  objectKey: string;
  contentType: string;
  channels: 'dual' | 'mono';
  sampleRate: number;
  startedOffsetMs: number;
  durationMs: number | null;
  bytes: number | null;
  failure: string | null;
  createdAt: Date;
  completedAt: Date | null;
  deletedAt: Date | null;
}

export interface NewCallRecording {
  callId: string;
  organizationId: string;
  store: RecordingStoreKind;
  objectKey: string;
  contentType: string;
  channels: 'dual' | 'mono';
  sampleRate: number;
  startedOffsetMs: number;
}

/** A recording past its organization's retention period. */
export interface ExpiredRecording {
  callId: string;
  organizationId: string;
  store: RecordingStoreKind;
  objectKey: string;
}

type Row = Prisma.CallRecordingGetPayload<object>;

function toRecord(row: Row): CallRecordingRecord {
  return {
    callId: row.callId,
    organizationId: row.organizationId,
    status: row.status as CallRecordingStatus,
    store: row.store as RecordingStoreKind,
    objectKey: row.objectKey,
    contentType: row.contentType,
    channels: row.channels as 'dual' | 'mono',
    sampleRate: row.sampleRate,
    startedOffsetMs: row.startedOffsetMs,
    durationMs: row.durationMs,
    bytes: row.bytes === null ? null : Number(row.bytes),
    failure: row.failure,
    createdAt: row.createdAt,
    completedAt: row.completedAt,
    deletedAt: row.deletedAt,
  };
}

/** The call_recordings table: one row per recorded call, kept after the file is gone. */
@Injectable()
export class CallRecordingRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Written when recording starts, so a crash mid-call leaves a row that says so. */
  async start(input: NewCallRecording): Promise<void> {
    await this.prisma.callRecording.create({ data: { ...input, status: 'recording' } });
  }

  /** The file is stored: the recording can be played. Only a recording still in progress changes. */
  async complete(callId: string, result: { bytes: number; durationMs: number }, at: Date): Promise<boolean> {
    const { count } = await this.prisma.callRecording.updateMany({
      where: { callId, status: 'recording' },
      data: { status: 'available', bytes: BigInt(result.bytes), durationMs: result.durationMs, completedAt: at },
    });
    return count === 1;
  }

  async fail(callId: string, failure: string, at: Date): Promise<void> {
    await this.prisma.callRecording.updateMany({
      where: { callId, status: 'recording' },
      data: { status: 'failed', failure: failure.slice(0, 500), completedAt: at },
    });
  }

  /** The organization's recording of this call (any status), or null: another organization's call is not found. */
  async find(organizationId: string, callId: string): Promise<CallRecordingRecord | null> {
    if (!isUuid(callId)) return null;
    const row = await this.prisma.callRecording.findFirst({ where: { callId, organizationId } });
    return row ? toRecord(row) : null;
  }

  /** By call id alone: only for a request already authorised for this call (a signed recording link). */
  async findByCall(callId: string): Promise<CallRecordingRecord | null> {
    if (!isUuid(callId)) return null;
    const row = await this.prisma.callRecording.findUnique({ where: { callId } });
    return row ? toRecord(row) : null;
  }

  /** Marks the recording deleted (its object already removed); false when it was already gone. */
  async markDeleted(organizationId: string, callId: string, at: Date): Promise<boolean> {
    const { count } = await this.prisma.callRecording.updateMany({
      where: { callId, organizationId, status: { in: ['available', 'failed'] } },
      data: { status: 'deleted', deletedAt: at },
    });
    return count === 1;
  }

  /**
   * Stored recordings older than their organization's retention period, oldest first, at most
   * `limit`. Not locked: two sweepers may pick the same row, and both deletes are harmless
   * (removing a missing object is not an error, and the status update is conditional).
   */
  async expired(now: Date, limit: number): Promise<ExpiredRecording[]> {
    return this.prisma.$queryRaw<ExpiredRecording[]>(Prisma.sql`
      SELECT r.call_id AS "callId", r.organization_id AS "organizationId", r.store, r.object_key AS "objectKey"
      FROM call_recordings r
      JOIN organizations o ON o.id = r.organization_id
      WHERE r.status IN ('available', 'failed')
        AND o.recording_retention_days IS NOT NULL
        AND r.created_at < ${now}::timestamptz - make_interval(days => o.recording_retention_days)
      ORDER BY r.created_at
      LIMIT ${limit}`);
  }

  /**
   * Recordings still marked 'recording' although their call ended before `endedBefore`: the process
   * that carried the call stopped before storing the file (its spool file may still be on that
   * process's disk).
   */
  async interrupted(endedBefore: Date, limit: number): Promise<CallRecordingRecord[]> {
    const rows = await this.prisma.callRecording.findMany({
      where: { status: 'recording', call: { endedAt: { lt: endedBefore } } },
      orderBy: { createdAt: 'asc' },
      take: limit,
    });
    return rows.map(toRecord);
  }

  async retentionDays(organizationId: string): Promise<number | null | undefined> {
    const row = await this.prisma.organization.findUnique({ where: { id: organizationId }, select: { recordingRetentionDays: true } });
    return row ? row.recordingRetentionDays : undefined;
  }

  /** false when the organization does not exist. */
  async setRetentionDays(organizationId: string, days: number | null): Promise<boolean> {
    const { count } = await this.prisma.organization.updateMany({ where: { id: organizationId }, data: { recordingRetentionDays: days } });
    return count === 1;
  }
}
