import type { Call, CallEvent } from '../generated/prisma/client';
import type { JsonValue } from './json';
import type { ToolInvocationRecord, TranscriptTurnRecord, TurnLatencyRecord } from './conversation-records';

import type { CallDirection } from './call-list-filters';

export type { CallDirection };

/** One status callback as received; `at` is ISO 8601. */
export interface StatusTimelineEntry {
  status: string;
  at: string;
  sequenceNumber: number | null;
}

/** A call as the rest of the app sees it: the stream-token columns never leave the repository. */
export interface CallRecord {
  id: string;
  organizationId: string | null;
  /** Null while an outbound call waits for Twilio's calls.create to answer, and always for a web call. */
  twilioCallSid: string | null;
  twilioStreamSid: string | null;
  /** Null exactly for web calls (no Twilio account carries them). */
  twilioAccountSid: string | null;
  direction: CallDirection;
  fromNumber: string;
  toNumber: string;
  agentId: string | null;
  agentConfigVersion: number | null;
  status: string;
  lastStatusSequence: number | null;
  /** Every status seen, stale ones included, sorted by sequenceNumber (entries without one, like
   *  the incoming-call webhook's, first) then time. */
  statusTimeline: StatusTimelineEntry[];
  createdAt: Date;
  startedAt: Date;
  answeredAt: Date | null;
  endedAt: Date | null;
  durationSeconds: number | null;
  billedMinutes: number | null;
  streamStartedAt: Date | null;
  streamEndedAt: Date | null;
  endReason: string | null;
  /** Per-call variables (POST /v1/calls); the agent sees them as {{call.params.NAME}}. */
  variables: Record<string, string>;
  /** Answering-machine detection asked of Twilio ('Enable' | 'DetectMessageEnd'), outbound only. */
  machineDetection: string | null;
  /** Twilio's AnsweredBy once detection decided (human, machine_start, fax, unknown, ...). */
  answeredBy: string | null;
  updatedAt: Date;
}

export interface CallEventRecord {
  /** bigserial, as a string: JSON has no 64-bit integers. */
  id: string;
  callId: string;
  at: Date;
  /** Milliseconds since the call's startedAt. */
  offsetMs: number | null;
  type: string;
  payload: JsonValue;
}

export interface CallDetail extends CallRecord {
  /** Ordered by time, then insertion. */
  events: CallEventRecord[];
  /** Ordered by turn index. */
  transcript: TranscriptTurnRecord[];
  /** Ordered by start offset. */
  toolInvocations: ToolInvocationRecord[];
  /** One latency waterfall per reply, ordered by turn index. */
  latency: TurnLatencyRecord[];
}

export interface CallPage {
  items: CallRecord[];
  /** Pass back as `cursor` for the next page; null on the last page. */
  nextCursor: string | null;
}

/**
 * Prisma `omit` for every read of a call: the one-time stream token never leaves the repository, the
 * media heartbeat is the reconciler's bookkeeping, not part of the call, and the voicemail message
 * is read by the media path alone (claimMediaStream); the call's `voicemail_left` event shows it.
 * A campaign call's contact and attempt are shown by GET /v1/campaigns/:id/contacts.
 */
export const OMIT_INTERNAL_COLUMNS = {
  streamTokenHash: true,
  streamTokenExpiresAt: true,
  streamTokenUsedAt: true,
  mediaSeenAt: true,
  voicemailMessage: true,
  campaignContactId: true,
  campaignAttempt: true,
} as const;

type CallRow = Omit<Call, keyof typeof OMIT_INTERNAL_COLUMNS>;

export function toCallRecord(row: CallRow): CallRecord {
  return {
    ...row,
    direction: row.direction as CallDirection,
    statusTimeline: Array.isArray(row.statusTimeline) ? (row.statusTimeline as unknown as StatusTimelineEntry[]) : [],
    variables: toCallRecordVariables(row.variables),
  };
}

/** calls.variables as stored (a JSON object of strings); anything else reads as no variables. */
export function toCallRecordVariables(value: unknown): Record<string, string> {
  return isStringRecord(value) ? value : {};
}

export function toCallEventRecord(row: CallEvent): CallEventRecord {
  return { ...row, id: row.id.toString() };
}

function isStringRecord(value: unknown): value is Record<string, string> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.values(value).every((v) => typeof v === 'string');
}
