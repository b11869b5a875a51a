// The statements a call's end and Twilio's status callbacks run inside the call-lifecycle services' transactions.
import { Prisma } from '../generated/prisma/client';
import { invalidInput } from '../persistence.errors';
import type { Tx } from '../transaction-runner';
import { isTwilioCallStatus, TERMINAL_CALL_STATUSES } from './call-status';

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

/** A call row locked for the rest of a transaction, as it was before the transaction's write. */
export interface LockedCall {
  id: string;
  answeredAt: Date | null;
  endedAt: Date | null;
  endReason: string | null;
  /** Placed by a campaign: its end is an attempt's outcome. */
  inCampaign: boolean;
  /** The agent config version the call runs with has analysis.enabled: its end queues an analysis. */
  analysisEnabled: boolean;
}

/** Row-locks one call for the rest of the transaction and returns what it was before this write. */
export async function lockCall(tx: Tx, by: { id: string } | { twilioCallSid: string }): Promise<LockedCall | null> {
  const where = 'id' in by ? Prisma.sql`id = ${by.id}::uuid` : Prisma.sql`twilio_call_sid = ${by.twilioCallSid}`;
  // What the call's end has to do besides its own state (a campaign outcome, an analysis) is read
  // in this statement, so a call that needs neither costs its end no further query.
  const rows = await tx.$queryRaw<Array<{ id: string; answered_at: Date | null; ended_at: Date | null; end_reason: string | null; in_campaign: boolean; analysis_enabled: boolean }>>(
    Prisma.sql`SELECT id, answered_at, ended_at, end_reason, campaign_contact_id IS NOT NULL AS in_campaign,
      EXISTS (SELECT 1 FROM agent_config_versions v
              WHERE v.agent_id = calls.agent_id AND v.version = calls.agent_config_version
                AND v.config -> 'analysis' -> 'enabled' = 'true'::jsonb) AS analysis_enabled
    FROM calls WHERE ${where} FOR UPDATE OF calls`,
  );
  const row = rows[0];
  return row
    ? { id: row.id, answeredAt: row.answered_at, endedAt: row.ended_at, endReason: row.end_reason, inCampaign: row.in_campaign, analysisEnabled: row.analysis_enabled }
    : null;
}

/**
 * Gives a locked call its end reason; endedAt keeps the earliest time seen (Twilio's or ours). A
 * web call has no Twilio to report its final status, so its end is also its 'completed'.
 */
export async function setCallEndReason(tx: Tx, callId: string, endReason: string, endedAt: Date): Promise<void> {
  const at = endedAt.toISOString();
  await tx.$executeRaw(Prisma.sql`
    UPDATE calls
    SET end_reason = ${endReason},
        ended_at = LEAST(ended_at, ${at}::timestamptz),
        status = CASE WHEN direction = 'web' THEN 'completed' ELSE status END,
        status_timeline = CASE WHEN direction = 'web'
          THEN status_timeline || jsonb_build_array(jsonb_build_object('status', 'completed', 'at', ${at}::text, 'sequenceNumber', NULL))
          ELSE status_timeline END,
        updated_at = now()
    WHERE id = ${callId}::uuid`);
}

/**
 * Applies a Twilio status callback to a locked call in one UPDATE:
 *  - the callback is always added to the timeline (kept sorted);
 *  - `status` moves only to a newer SequenceNumber, and never from a terminal status back to
 *    a non-terminal one (the only guard when Twilio sends no sequence numbers);
 *  - answeredAt / endedAt keep the earliest 'in-progress' / terminal time;
 *  - durations are set when present.
 */
export async function applyCallStatus(tx: Tx, callId: string, input: StatusCallbackInput): Promise<void> {
  const { status, at } = input;
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
    WHERE id = ${callId}::uuid`);
}
