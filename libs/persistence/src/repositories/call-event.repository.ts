import { Injectable } from '@nestjs/common';
import { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../prisma.service';
import { invalidInput, PersistenceError } from '../persistence.errors';
import { isUuid } from '../uuid';
import { CallEventRecord, toCallEventRecord } from './call-records';

export interface CallEventInput {
  /** stream_start, stream_stop, dtmf, mark, error, ... */
  type: string;
  at: Date;
  /** Must be JSON-serialisable (checked before anything is written). */
  payload?: Record<string, unknown>;
  /** Milliseconds since the call's start; computed from calls.started_at when omitted. */
  offsetMs?: number;
}

/** Largest batch one INSERT takes; bigger batches are a caller bug (unbounded buffering). */
export const CALL_EVENT_MAX_BATCH = 5_000;

@Injectable()
export class CallEventRepository {
  constructor(private readonly prisma: PrismaService) {}

  async append(callId: string, event: CallEventInput): Promise<void> {
    await this.appendMany(callId, [event]);
  }

  /**
   * Appends events in ONE INSERT (the media path buffers events and flushes them in batches,
   * so a flush is one round trip whatever its size). Ids follow the array order. The batch is
   * all-or-nothing: on error nothing is written and the caller still holds its buffer.
   * Throws not_found when the call does not exist.
   */
  async appendMany(callId: string, events: readonly CallEventInput[]): Promise<void> {
    if (events.length === 0) return;
    if (events.length > CALL_EVENT_MAX_BATCH) {
      throw invalidInput(`At most ${CALL_EVENT_MAX_BATCH} events per batch, got ${events.length}`);
    }
    if (!isUuid(callId)) throw new PersistenceError('not_found', `Call ${callId} does not exist`);

    const ats: string[] = [];
    const types: string[] = [];
    const payloads: string[] = [];
    const offsets: Array<number | null> = [];
    events.forEach((event, index) => {
      if (event.type.length === 0) throw invalidInput(`Event #${index} has an empty type`);
      if (Number.isNaN(event.at.getTime())) throw invalidInput(`Event #${index} (${event.type}) has an invalid time`);
      ats.push(event.at.toISOString());
      types.push(event.type);
      payloads.push(serializePayload(event, index));
      offsets.push(event.offsetMs === undefined ? null : Math.round(event.offsetMs));
    });

    // unnest() turns the parallel arrays into rows; joining calls both computes offset_ms and
    // makes a missing call insert zero rows instead of failing on the foreign key.
    const inserted = await this.prisma.$executeRaw(Prisma.sql`
      INSERT INTO call_events (call_id, at, offset_ms, type, payload)
      SELECT c.id, e.at, COALESCE(e.offset_ms, ROUND(EXTRACT(EPOCH FROM (e.at - c.started_at)) * 1000)::int),
             e.type, e.payload
      FROM unnest(${ats}::text[]::timestamptz[], ${types}::text[], ${payloads}::text[]::jsonb[], ${offsets}::int[])
             WITH ORDINALITY AS e(at, type, payload, offset_ms, ord)
      JOIN calls c ON c.id = ${callId}::uuid
      ORDER BY e.ord`);
    if (inserted === 0) throw new PersistenceError('not_found', `Call ${callId} does not exist`);
  }

  /** The call's events in time order (ties in insertion order). */
  async listForCall(callId: string): Promise<CallEventRecord[]> {
    if (!isUuid(callId)) return [];
    const rows = await this.prisma.callEvent.findMany({ where: { callId }, orderBy: [{ at: 'asc' }, { id: 'asc' }] });
    return rows.map(toCallEventRecord);
  }
}

function serializePayload(event: CallEventInput, index: number): string {
  try {
    return JSON.stringify(event.payload ?? {});
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw invalidInput(`Event #${index} (${event.type}) payload is not JSON-serialisable: ${reason}`);
  }
}
