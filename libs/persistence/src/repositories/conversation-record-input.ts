import { Prisma } from '../generated/prisma/client';
import { invalidInput } from '../persistence.errors';
import {
  TRANSCRIPT_ROLES,
  TRANSCRIPT_SOURCES,
  TURN_LATENCY_FIELDS,
  type ToolInvocationInput,
  type TranscriptTurnInput,
  type TurnLatencyField,
  type TurnLatencyInput,
} from './conversation-records';

/*
 * Checks and normalises conversation records before they are written, so that a bad record is
 * reported as invalid_input naming the record (instead of an opaque database error), and so that
 * nothing the model may produce makes a whole batch unwritable.
 */

const INT4_MAX = 2_147_483_647;
const REPLACEMENT_CHARACTER = '\uFFFD';

/** Postgres text and jsonb cannot hold U+0000, which a model can emit: replace it rather than lose the record. */
export function storableText(text: string): string {
  return text.includes('\u0000') ? text.replaceAll('\u0000', REPLACEMENT_CHARACTER) : text;
}

export type StorableLatency = { turnIndex: number } & { [K in TurnLatencyField]: number | null };

export function toTranscriptTurnRow(callId: string, turn: TranscriptTurnInput, at: number): Prisma.TranscriptTurnCreateManyInput {
  const what = `Transcript turn #${at}`;
  if (!isIndex(turn.index)) throw invalidInput(`${what} has an invalid index ${String(turn.index)}`);
  if (!(TRANSCRIPT_ROLES as readonly unknown[]).includes(turn.role)) throw invalidInput(`${what} has an unknown role '${String(turn.role)}'`);
  if (!(TRANSCRIPT_SOURCES as readonly unknown[]).includes(turn.source)) {
    throw invalidInput(`${what} has an unknown source '${String(turn.source)}'`);
  }
  if (typeof turn.text !== 'string') throw invalidInput(`${what} has no text`);
  if (turn.heardText !== null && turn.heardText !== undefined && typeof turn.heardText !== 'string') {
    throw invalidInput(`${what} has a heardText that is not a string`);
  }
  if (typeof turn.interrupted !== 'boolean') throw invalidInput(`${what} has a non-boolean 'interrupted'`);
  return {
    callId,
    index: turn.index,
    role: turn.role,
    source: turn.source,
    text: storableText(turn.text),
    heardText: typeof turn.heardText === 'string' ? storableText(turn.heardText) : null,
    interrupted: turn.interrupted,
    startMs: wholeMs(turn.startMs, `${what} startMs`),
    endMs: wholeMs(turn.endMs, `${what} endMs`),
  };
}

export function toToolInvocationRow(
  callId: string,
  item: ToolInvocationInput,
  at: number,
): Prisma.ToolInvocationCreateManyInput {
  const what = `Tool invocation #${at}`;
  if (typeof item.toolCallId !== 'string') throw invalidInput(`${what} has no toolCallId`);
  if (typeof item.name !== 'string' || item.name.length === 0) throw invalidInput(`${what} has no name`);
  if (item.error !== null && item.error !== undefined && typeof item.error !== 'string') {
    throw invalidInput(`${what} has an error that is not a string`);
  }
  if (typeof item.latencyMs !== 'number' || !Number.isFinite(item.latencyMs)) {
    throw invalidInput(`${what} has an invalid latencyMs ${String(item.latencyMs)}`);
  }
  const args = toJson(item.arguments, `${what} (${item.name}) arguments`);
  const result = toJson(item.result, `${what} (${item.name}) result`);
  return {
    callId,
    toolCallId: storableText(item.toolCallId),
    name: storableText(item.name),
    // arguments is NOT NULL: absent arguments are stored as JSON null.
    arguments: args ?? Prisma.JsonNull,
    result: result ?? Prisma.DbNull,
    error: typeof item.error === 'string' ? storableText(item.error) : null,
    startedAtMs: wholeMs(item.startedAtMs, `${what} startedAtMs`),
    latencyMs: item.latencyMs,
  };
}

/**
 * Validates a batch of waterfalls and folds reports for the same turn into one (later non-null
 * fields win): a single upsert statement may not touch the same row twice.
 */
export function mergeTurnLatencies(items: readonly TurnLatencyInput[]): StorableLatency[] {
  const byTurn = new Map<number, StorableLatency>();
  items.forEach((item, at) => {
    if (!isIndex(item.turnIndex)) throw invalidInput(`Turn latency #${at} has an invalid turnIndex ${String(item.turnIndex)}`);
    const merged = byTurn.get(item.turnIndex) ?? emptyLatency(item.turnIndex);
    for (const field of TURN_LATENCY_FIELDS) {
      const value = item[field];
      if (value === null || value === undefined) continue;
      if (typeof value !== 'number' || !Number.isFinite(value)) {
        throw invalidInput(`Turn latency #${at} (turn ${item.turnIndex}) has an invalid ${field} ${String(value)}`);
      }
      merged[field] = value;
    }
    byTurn.set(item.turnIndex, merged);
  });
  return [...byTurn.values()];
}

function emptyLatency(turnIndex: number): StorableLatency {
  const latency = { turnIndex } as StorableLatency;
  for (const field of TURN_LATENCY_FIELDS) latency[field] = null;
  return latency;
}

function isIndex(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= INT4_MAX;
}

/** Offsets go to int columns: rounded, and rejected when they cannot be stored. */
function wholeMs(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || Math.abs(value) > INT4_MAX) {
    throw invalidInput(`${what} is not a storable offset: ${String(value)}`);
  }
  return Math.round(value);
}

/** A JSON copy of `value` (null when there is nothing to store), or invalid_input naming `what`. */
function toJson(value: unknown, what: string): Prisma.InputJsonValue | null {
  if (value === undefined || value === null) return null;
  let text: string | undefined;
  try {
    text = JSON.stringify(value, (_key, inner: unknown) => (typeof inner === 'string' ? storableText(inner) : inner));
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw invalidInput(`${what} is not JSON-serialisable: ${reason}`);
  }
  // JSON.stringify gives undefined for functions and symbols: nothing to store.
  return text === undefined ? null : (JSON.parse(text) as Prisma.InputJsonValue | null);
}
