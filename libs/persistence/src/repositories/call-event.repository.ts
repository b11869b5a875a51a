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

    const rows = events.map(toEventRow);
    const ats = rows.map((row) => row.at);
    const types = rows.map((row) => row.type);
    const payloads = rows.map((row) => row.payload);
    const offsets = rows.map((row) => row.offset);

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

  /**
   * Appends several calls' events in ONE INSERT: the server joins what its live calls flush within
   * a short window (group commit), so 250 calls cost a few statements a second, not hundreds.
   * A call whose events are invalid, or that does not exist, gets its own error in the returned map
   * and writes nothing; the other calls' events are written (ids in array order per call).
   */
  async appendForCalls(batches: ReadonlyArray<{ callId: string; events: readonly CallEventInput[] }>): Promise<Map<string, PersistenceError>> {
    const failures = new Map<string, PersistenceError>();
    const callIds: string[] = [];
    const ats: string[] = [];
    const types: string[] = [];
    const payloads: string[] = [];
    const offsets: Array<number | null> = [];
    for (const { callId, events } of batches) {
      try {
        if (events.length > CALL_EVENT_MAX_BATCH) throw invalidInput(`At most ${CALL_EVENT_MAX_BATCH} events per batch, got ${events.length}`);
        if (!isUuid(callId)) throw new PersistenceError('not_found', `Call ${callId} does not exist`);
        const rows = events.map(toEventRow);
        for (const row of rows) {
          callIds.push(callId);
          ats.push(row.at);
          types.push(row.type);
          payloads.push(row.payload);
          offsets.push(row.offset);
        }
      } catch (error) {
        failures.set(callId, error instanceof PersistenceError ? error : invalidInput(String(error)));
      }
    }
    if (callIds.length === 0) return failures;
    const written = await this.prisma.$queryRaw<Array<{ call_id: string }>>(Prisma.sql`
      WITH inserted AS (
        INSERT INTO call_events (call_id, at, offset_ms, type, payload)
        SELECT c.id, e.at, COALESCE(e.offset_ms, ROUND(EXTRACT(EPOCH FROM (e.at - c.started_at)) * 1000)::int),
               e.type, e.payload
        FROM unnest(${callIds}::uuid[], ${ats}::text[]::timestamptz[], ${types}::text[], ${payloads}::text[]::jsonb[], ${offsets}::int[])
               WITH ORDINALITY AS e(call_id, at, type, payload, offset_ms, ord)
        JOIN calls c ON c.id = e.call_id
        ORDER BY e.ord
        RETURNING call_id)
      SELECT DISTINCT call_id::text FROM inserted`);
    const present = new Set(written.map((row) => row.call_id));
    for (const callId of new Set(callIds)) {
      if (!present.has(callId)) failures.set(callId, new PersistenceError('not_found', `Call ${callId} does not exist`));
    }
    return failures;
  }

  /** The call's events in time order (ties in insertion order). */
  async listForCall(callId: string): Promise<CallEventRecord[]> {
    if (!isUuid(callId)) return [];
    const rows = await this.prisma.callEvent.findMany({ where: { callId }, orderBy: [{ at: 'asc' }, { id: 'asc' }] });
    return rows.map(toCallEventRecord);
  }
}

/** One event as the INSERT's parallel arrays take it; throws invalid_input naming a bad event. */
function toEventRow(event: CallEventInput, index: number): { at: string; type: string; payload: string; offset: number | null } {
  if (event.type.length === 0) throw invalidInput(`Event #${index} has an empty type`);
  if (Number.isNaN(event.at.getTime())) throw invalidInput(`Event #${index} (${event.type}) has an invalid time`);
  return { at: event.at.toISOString(), type: event.type, payload: serializePayload(event, index), offset: event.offsetMs === undefined ? null : Math.round(event.offsetMs) };
}

function serializePayload(event: CallEventInput, index: number): string {
  try {
    return JSON.stringify(event.payload ?? {});
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw invalidInput(`Event #${index} (${event.type}) payload is not JSON-serialisable: ${reason}`);
  }
}
