import type { ToolInvocation, TranscriptTurn, TurnLatency } from '../generated/prisma/client';
import type { JsonValue } from './json';

/*
 * A conversation's records as stored. The input shapes mirror the conversation runtime's
 * (libs/conversation/src/records/conversation-records.ts) field for field, so the server can hand
 * the runtime's records straight to the repository; they are restated here because persistence
 * must not depend on the conversation library. Every *Ms field is an offset in the call:
 * milliseconds since calls.started_at, the origin call events use too.
 */

export const TRANSCRIPT_ROLES = ['user', 'assistant'] as const;
export type TranscriptRole = (typeof TRANSCRIPT_ROLES)[number];

/** Keep in step with the transcript_turns_source_check constraint. */
export const TRANSCRIPT_SOURCES = [
  'speech',
  'dtmf',
  'first_message',
  'idle_prompt',
  'tool_filler',
  'apology',
  'closing',
  'voicemail',
  'transfer_return',
] as const;
export type TranscriptSource = (typeof TRANSCRIPT_SOURCES)[number];

export interface TranscriptTurnInput {
  /** 0, 1, 2 ... unique per call: a turn written twice (a retried batch) is stored once. */
  index: number;
  role: TranscriptRole;
  source: TranscriptSource;
  text: string;
  heardText: string | null;
  interrupted: boolean;
  /** Stored as whole milliseconds. */
  startMs: number;
  endMs: number;
}

export interface TranscriptTurnRecord extends TranscriptTurnInput {
  id: string;
  createdAt: Date;
}

export interface ToolInvocationInput {
  toolCallId: string;
  name: string;
  /** Any JSON-serialisable value (parsed arguments, or the raw text the model produced). */
  arguments: unknown;
  /** JSON-serialisable; null/undefined is stored as SQL NULL. */
  result: unknown;
  error: string | null;
  /** Stored as whole milliseconds. */
  startedAtMs: number;
  latencyMs: number;
}

export interface ToolInvocationRecord {
  id: string;
  toolCallId: string;
  name: string;
  arguments: JsonValue;
  result: JsonValue | null;
  error: string | null;
  startedAtMs: number;
  latencyMs: number;
  createdAt: Date;
}

/** The latency waterfall's offsets, in the order the steps happen. */
export const TURN_LATENCY_FIELDS = [
  'endOfSpeechMs',
  'endOfTurnFrameMs',
  'endOfTurnMs',
  'asrFinalMs',
  'llmFirstTokenMs',
  'ttsFirstByteMs',
  'firstFrameSentMs',
  'firstMarkEchoedMs',
  'interruptedAtMs',
] as const;
export type TurnLatencyField = (typeof TURN_LATENCY_FIELDS)[number];

/** A reply's waterfall; a field left null (or out) keeps what an earlier write stored. */
export type TurnLatencyInput = { turnIndex: number } & { [K in TurnLatencyField]?: number | null };

export type TurnLatencyRecord = { turnIndex: number } & { [K in TurnLatencyField]: number | null } & {
  /** Caller stopped speaking -> first agent audio frame sent; null unless both are known. */
  voiceToVoiceMs: number | null;
  createdAt: Date;
};

export function toTranscriptTurnRecord(row: TranscriptTurn): TranscriptTurnRecord {
  return {
    id: row.id,
    index: row.index,
    role: row.role as TranscriptRole,
    source: row.source as TranscriptSource,
    text: row.text,
    heardText: row.heardText,
    interrupted: row.interrupted,
    startMs: row.startMs,
    endMs: row.endMs,
    createdAt: row.createdAt,
  };
}

export function toToolInvocationRecord(row: ToolInvocation): ToolInvocationRecord {
  return {
    id: row.id,
    toolCallId: row.toolCallId,
    name: row.name,
    arguments: row.arguments,
    result: row.result,
    error: row.error,
    startedAtMs: row.startedAtMs,
    latencyMs: row.latencyMs,
    createdAt: row.createdAt,
  };
}

export function toTurnLatencyRecord(row: TurnLatency): TurnLatencyRecord {
  const { endOfSpeechMs, firstFrameSentMs } = row;
  return {
    turnIndex: row.turnIndex,
    endOfSpeechMs,
    endOfTurnFrameMs: row.endOfTurnFrameMs,
    endOfTurnMs: row.endOfTurnMs,
    asrFinalMs: row.asrFinalMs,
    llmFirstTokenMs: row.llmFirstTokenMs,
    ttsFirstByteMs: row.ttsFirstByteMs,
    firstFrameSentMs,
    firstMarkEchoedMs: row.firstMarkEchoedMs,
    interruptedAtMs: row.interruptedAtMs,
    voiceToVoiceMs: endOfSpeechMs !== null && firstFrameSentMs !== null ? firstFrameSentMs - endOfSpeechMs : null,
    createdAt: row.createdAt,
  };
}
