import { Injectable, Optional } from '@nestjs/common';
import { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../prisma.service';
import { invalidInput, PersistenceError } from '../persistence.errors';
import { isUuid } from '../uuid';
import { mergeTurnLatencies, toToolInvocationRow, toTranscriptTurnRow } from './conversation-record-input';
import {
  toToolInvocationRecord,
  toTranscriptTurnRecord,
  type ToolInvocationInput,
  type TranscriptTurnInput,
  type TurnLatencyInput,
} from './conversation-records';
import { WebhookOutbox, type WebhookEventInput } from '../webhooks/webhook-outbox';
import { toolInvocationData, transcriptTurnData } from '../webhooks/webhook-payloads';

/** Largest batch one write takes; bigger batches are a caller bug (unbounded buffering). */
export const CONVERSATION_RECORD_MAX_BATCH = 1_000;

/**
 * Stores what a conversation leaves behind: transcript turns, tool invocations and latency
 * waterfalls. The media path buffers records and writes them in batches; every method is one
 * statement, all-or-nothing, and safe to repeat after a failure (a retried batch never
 * duplicates a turn or a waterfall). Throws invalid_input naming the bad record before anything
 * is written, and not_found when the call does not exist. Turns and tool invocations are also
 * webhook events (transcript.turn, tool.invoked), written to the outbox in the same transaction.
 */
@Injectable()
export class ConversationRecordRepository {
  private readonly outbox: WebhookOutbox;

  constructor(
    private readonly prisma: PrismaService,
    @Optional() outbox?: WebhookOutbox,
  ) {
    this.outbox = outbox ?? new WebhookOutbox();
  }

  /**
   * Inserts turns; a turn whose (call, index) is already stored is skipped, not overwritten. Only
   * the turns actually inserted become transcript.turn events, so a retried batch emits nothing twice.
   */
  async appendTranscriptTurns(callId: string, turns: readonly TranscriptTurnInput[]): Promise<void> {
    const failure = (await this.appendTranscriptTurnsForCalls([{ callId, turns }])).get(callId);
    if (failure) throw failure;
  }


  /**
   * Several calls' turns in one transaction (the server's group commit): one lookup of the calls,
   * one INSERT, one outbox write. A call whose turns are invalid, or that does not exist, gets its
   * own error in the returned map and writes nothing; the others are written as appendTranscriptTurns would.
   */
  async appendTranscriptTurnsForCalls(
    batches: ReadonlyArray<{ callId: string; turns: readonly TranscriptTurnInput[] }>,
  ): Promise<Map<string, PersistenceError>> {
    const failures = new Map<string, PersistenceError>();
    const rows: Prisma.TranscriptTurnCreateManyInput[] = [];
    for (const { callId, turns } of batches) {
      try {
        if (checkBatch(callId, turns.length, 'transcript turns')) rows.push(...turns.map((turn, at) => toTranscriptTurnRow(callId, turn, at)));
      } catch (error) {
        failures.set(callId, asPersistenceError(error));
      }
    }
    if (rows.length === 0) return failures;
    const callIds = [...new Set(rows.map((row) => row.callId))];
    const deliveries = await this.prisma.$transaction(async (tx) => {
      const calls = await tx.call.findMany({ where: { id: { in: callIds } }, select: { id: true, organizationId: true } });
      const organizationOf = new Map(calls.map((call) => [call.id, call.organizationId]));
      for (const callId of callIds) if (!organizationOf.has(callId)) failures.set(callId, callNotFound(callId));
      const inserted = await tx.transcriptTurn.createManyAndReturn({ data: rows.filter((row) => organizationOf.has(row.callId)), skipDuplicates: true });
      const events = inserted
        .sort((a, b) => a.callId.localeCompare(b.callId) || a.index - b.index)
        .flatMap((row) => {
          const organizationId = organizationOf.get(row.callId);
          if (!organizationId) return [];
          return [{ type: 'transcript.turn' as const, data: transcriptTurnData(row.callId, toTranscriptTurnRecord(row)), organizationId, callId: row.callId }];
        });
      // The outbox fans out per organization (its subscriptions): one write per organization in the group.
      const byOrganization = new Map<string, typeof events>();
      for (const event of events) {
        const group = byOrganization.get(event.organizationId);
        if (group) group.push(event);
        else byOrganization.set(event.organizationId, [event]);
      }
      let written = 0;
      for (const organizationEvents of byOrganization.values()) written += await this.outbox.enqueue(tx, organizationEvents);
      return written;
    });
    this.outbox.committed(deliveries);
    return failures;
  }

  /** One tool.invoked event per invocation, in the same transaction as the rows. */
  async insertToolInvocations(callId: string, items: readonly ToolInvocationInput[]): Promise<void> {
    if (!checkBatch(callId, items.length, 'tool invocations')) return;
    const data = items.map((item, at) => toToolInvocationRow(callId, item, at));
    await this.withCall(callId, () =>
      this.prisma.$transaction(async (tx) => {
        const inserted = await tx.toolInvocation.createManyAndReturn({ data });
        const events = inserted.map((row) => ({ type: 'tool.invoked' as const, data: toolInvocationData(callId, toToolInvocationRecord(row)) }));
        return this.enqueueForCall(tx, callId, events);
      }),
    );
  }

  /** Writes the call's events to the outbox (its organization's subscriptions); returns deliveries written. */
  private async enqueueForCall(
    tx: Prisma.TransactionClient,
    callId: string,
    events: Array<Pick<WebhookEventInput, 'type' | 'data'>>,
  ): Promise<number> {
    if (events.length === 0) return 0;
    const call = await tx.call.findUnique({ where: { id: callId }, select: { organizationId: true } });
    if (!call?.organizationId) return 0;
    const organizationId = call.organizationId;
    return this.outbox.enqueue(tx, events.map((event) => ({ ...event, organizationId, callId })));
  }

  /**
   * Writes latency waterfalls, merging into what is stored for the same turn: a field given
   * (non-null) replaces the stored one, a field left null keeps it. The runtime writes a
   * waterfall once the reply starts playing and again when the first mark comes back.
   */
  async upsertTurnLatencies(callId: string, items: readonly TurnLatencyInput[]): Promise<void> {
    if (!checkBatch(callId, items.length, 'turn latencies')) return;
    const rows = mergeTurnLatencies(items).map((row) => ({ ...row, callId }));
    // Updated rows count as affected too, so zero means the call is missing.
    const affected = await this.prisma.$executeRaw(latencyUpsert(rows));
    if (affected === 0) throw callNotFound(callId);
  }

  /** Several calls' waterfalls in one statement (the server's group commit); per-call errors as appendTranscriptTurnsForCalls. */
  async upsertTurnLatenciesForCalls(
    batches: ReadonlyArray<{ callId: string; items: readonly TurnLatencyInput[] }>,
  ): Promise<Map<string, PersistenceError>> {
    const failures = new Map<string, PersistenceError>();
    const rows: Array<ReturnType<typeof mergeTurnLatencies>[number] & { callId: string }> = [];
    for (const { callId, items } of batches) {
      try {
        if (checkBatch(callId, items.length, 'turn latencies')) rows.push(...mergeTurnLatencies(items).map((row) => ({ ...row, callId })));
      } catch (error) {
        failures.set(callId, asPersistenceError(error));
      }
    }
    if (rows.length === 0) return failures;
    const written = await this.prisma.$queryRaw<Array<{ call_id: string }>>(Prisma.sql`
      WITH upserted AS (${latencyUpsert(rows)} RETURNING call_id)
      SELECT DISTINCT call_id::text FROM upserted`);
    const present = new Set(written.map((row) => row.call_id));
    for (const { callId } of rows) if (!present.has(callId)) failures.set(callId, callNotFound(callId));
    return failures;
  }

  /**
   * Runs a write whose rows reference the call, turning a foreign-key failure into not_found; the
   * write returns how many webhook deliveries it committed, so the delivery worker can be nudged.
   */
  private async withCall(callId: string, write: () => Promise<number>): Promise<void> {
    try {
      this.outbox.committed(await write());
    } catch (error) {
      if (isForeignKeyViolation(error)) throw callNotFound(callId, error);
      throw error;
    }
  }
}

/** False when there is nothing to write; throws on a batch no caller should send. */
function checkBatch(callId: string, size: number, what: string): boolean {
  if (size === 0) return false;
  if (size > CONVERSATION_RECORD_MAX_BATCH) {
    throw invalidInput(`At most ${CONVERSATION_RECORD_MAX_BATCH} ${what} per batch, got ${size}`);
  }
  if (!isUuid(callId)) throw callNotFound(callId);
  return true;
}

function callNotFound(callId: string, cause?: unknown): PersistenceError {
  return new PersistenceError('not_found', `Call ${callId} does not exist`, false, cause === undefined ? undefined : { cause });
}

/** Prisma's P2003, or Postgres' 23503 when the adapter passes the driver error through. */
function isForeignKeyViolation(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current !== null && typeof current === 'object'; depth++) {
    const record = current as { code?: unknown; cause?: unknown };
    if (record.code === 'P2003' || record.code === '23503') return true;
    current = record.cause;
  }
  return false;
}

function asPersistenceError(error: unknown): PersistenceError {
  return error instanceof PersistenceError ? error : invalidInput(error instanceof Error ? error.message : String(error));
}

/**
 * INSERT ... ON CONFLICT for waterfalls of one or more calls: unnest() turns the parallel arrays
 * into rows; joining calls makes a missing call insert zero rows instead of failing on the
 * foreign key. A field given (non-null) replaces the stored one, a field left null keeps it.
 */
function latencyUpsert(rows: ReadonlyArray<ReturnType<typeof mergeTurnLatencies>[number] & { callId: string }>): Prisma.Sql {
  const column = <K extends keyof (typeof rows)[number]>(key: K) => rows.map((row) => row[key]);
  return Prisma.sql`
      INSERT INTO turn_latencies (call_id, turn_index, end_of_speech_ms, end_of_turn_frame_ms, end_of_turn_ms, asr_final_ms,
                                  llm_first_token_ms, tts_first_byte_ms, first_frame_sent_ms, first_mark_echoed_ms, interrupted_at_ms)
      SELECT c.id, l.turn_index, l.end_of_speech_ms, l.end_of_turn_frame_ms, l.end_of_turn_ms, l.asr_final_ms,
             l.llm_first_token_ms, l.tts_first_byte_ms, l.first_frame_sent_ms, l.first_mark_echoed_ms, l.interrupted_at_ms
      FROM unnest(${column('callId')}::uuid[], ${column('turnIndex')}::int[], ${column('endOfSpeechMs')}::float8[],
                  ${column('endOfTurnFrameMs')}::float8[], ${column('endOfTurnMs')}::float8[],
                  ${column('asrFinalMs')}::float8[], ${column('llmFirstTokenMs')}::float8[],
                  ${column('ttsFirstByteMs')}::float8[], ${column('firstFrameSentMs')}::float8[],
                  ${column('firstMarkEchoedMs')}::float8[], ${column('interruptedAtMs')}::float8[])
             AS l(call_id, turn_index, end_of_speech_ms, end_of_turn_frame_ms, end_of_turn_ms, asr_final_ms, llm_first_token_ms,
                  tts_first_byte_ms, first_frame_sent_ms, first_mark_echoed_ms, interrupted_at_ms)
      JOIN calls c ON c.id = l.call_id
      ON CONFLICT (call_id, turn_index) DO UPDATE SET
        end_of_speech_ms = COALESCE(EXCLUDED.end_of_speech_ms, turn_latencies.end_of_speech_ms),
        end_of_turn_frame_ms = COALESCE(EXCLUDED.end_of_turn_frame_ms, turn_latencies.end_of_turn_frame_ms),
        end_of_turn_ms = COALESCE(EXCLUDED.end_of_turn_ms, turn_latencies.end_of_turn_ms),
        asr_final_ms = COALESCE(EXCLUDED.asr_final_ms, turn_latencies.asr_final_ms),
        llm_first_token_ms = COALESCE(EXCLUDED.llm_first_token_ms, turn_latencies.llm_first_token_ms),
        tts_first_byte_ms = COALESCE(EXCLUDED.tts_first_byte_ms, turn_latencies.tts_first_byte_ms),
        first_frame_sent_ms = COALESCE(EXCLUDED.first_frame_sent_ms, turn_latencies.first_frame_sent_ms),
        first_mark_echoed_ms = COALESCE(EXCLUDED.first_mark_echoed_ms, turn_latencies.first_mark_echoed_ms),
        interrupted_at_ms = COALESCE(EXCLUDED.interrupted_at_ms, turn_latencies.interrupted_at_ms)`;
}
