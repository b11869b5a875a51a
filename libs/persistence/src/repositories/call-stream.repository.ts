import { Injectable } from '@nestjs/common';
import { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../prisma.service';
import { isUuid } from '../uuid';
import { toCallRecordVariables } from './call-records';
import type { AgentEngine } from './agent.repository';
import type { JsonValue } from './json';

/** What the media path needs once a stream is authorised. */
export interface StreamCallContext {
  callId: string;
  organizationId: string;
  agentId: string;
  agentEngine: AgentEngine;
  /** The config version the call was answered with (not necessarily the agent's current one). */
  agentConfigVersion: number;
  agentConfig: JsonValue;
  /** Null for a web call (and never null for a call a Twilio media socket claims). */
  twilioCallSid: string | null;
  /** The Twilio account the call belongs to (the media socket must have been signed by it); null for a web call. */
  twilioAccountSid: string | null;
  fromNumber: string;
  toNumber: string;
  /** calls.started_at: the origin of every offset recorded for the call. */
  startedAt: Date;
  /** Per-call variables from POST /v1/calls ({} for inbound calls). */
  variables: Record<string, string>;
  /** Twilio's answering-machine verdict, when it was known as the stream started (async AMD may come later). */
  answeredBy: string | null;
  /** The voicemail to leave when a machine answers (outbound calls placed with DetectMessageEnd); null: none. */
  voicemailMessage: string | null;
  /** The scenario test run that placed the call (web calls only); null for every other call. */
  testRunId: string | null;
  /** inbound, outbound or web (a metrics label: live calls by direction). */
  direction: string;
}

export type StreamTokenOutcome = 'ok' | 'missing' | 'reused' | 'expired' | 'mismatch' | 'wrong_account';

/**
 * Which Twilio account signed the media socket: an organization's own account (its calls only), or
 * the operator's (calls of accounts no organization registered, i.e. the bootstrap organization's);
 * or `web`: the console's call socket, which may claim web calls only.
 */
export type StreamAccount = { kind: 'operator' } | { kind: 'organization'; accountSid: string } | { kind: 'web' };

export type StreamClaim =
  | { outcome: 'ok'; context: StreamCallContext }
  | { outcome: Exclude<StreamTokenOutcome, 'ok'> };


/** A call the reconciler looks at: not ended, and its media quiet (or never started) for too long. */
export interface QuietCall {
  id: string;
  organizationId: string | null;
  twilioCallSid: string | null;
  twilioAccountSid: string;
  status: string;
  streamStartedAt: Date | null;
  mediaSeenAt: Date | null;
}

/**
 * The media side of the calls table: claiming a call's stream with its single-use token, marking
 * its end, the heartbeat of the process that carries it, and finding calls nobody carries any more.
 */
@Injectable()
export class CallStreamRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Claims the call's media stream with its single-use token, in ONE atomic statement: spends the
   * token, records the stream's start (the first start wins) and returns what the media path needs
   * to run the agent (the agent, its engine and the exact config version the call was answered
   * with). One round trip, because caller audio is being held while this runs. Concurrent sockets
   * presenting the same token: exactly one gets 'ok'. A refusal never spends the token or touches
   * the call, which may be live on another socket.
   */
  async claimMediaStream(input: { callId: string; tokenHash: string; streamSid: string; now: Date; account?: StreamAccount }): Promise<StreamClaim> {
    const { callId, tokenHash, streamSid, now } = input;
    if (!isUuid(callId)) return { outcome: 'missing' };
    const nowIso = now.toISOString();
    const accountMatches = streamAccountCondition(input.account ?? { kind: 'operator' });
    const rows = await this.prisma.$queryRaw<
      Array<{
        organization_id: string;
        agent_id: string;
        engine: string;
        version: number;
        config: JsonValue;
        twilio_call_sid: string | null;
        twilio_account_sid: string | null;
        from_number: string;
        to_number: string;
        started_at: Date;
        variables: JsonValue;
        answered_by: string | null;
        voicemail_message: string | null;
        test_run_id: string | null;
        direction: string;
      }>
    >(Prisma.sql`
      WITH claimed AS (
        UPDATE calls
        SET stream_token_used_at = ${nowIso}::timestamptz,
            twilio_stream_sid = COALESCE(twilio_stream_sid, ${streamSid}),
            stream_started_at = COALESCE(stream_started_at, ${nowIso}::timestamptz),
            media_seen_at = ${nowIso}::timestamptz,
            updated_at = now()
        WHERE id = ${callId}::uuid
          AND stream_token_hash = ${tokenHash}
          AND stream_token_used_at IS NULL
          AND stream_token_expires_at > ${nowIso}::timestamptz
          AND ${accountMatches}
        RETURNING organization_id, agent_id, agent_config_version, twilio_call_sid, twilio_account_sid, from_number, to_number,
                  started_at, variables, answered_by, voicemail_message, test_run_id, direction
      )
      SELECT c.organization_id, a.id AS agent_id, a.engine, v.version, v.config,
             c.twilio_call_sid, c.twilio_account_sid, c.from_number, c.to_number, c.started_at, c.variables, c.answered_by, c.voicemail_message, c.test_run_id, c.direction
      FROM claimed c
      JOIN agents a ON a.id = c.agent_id
      JOIN agent_config_versions v ON v.agent_id = c.agent_id AND v.version = c.agent_config_version`);
    const row = rows[0];
    if (row) {
      return {
        outcome: 'ok',
        context: {
          callId,
          organizationId: row.organization_id,
          agentId: row.agent_id,
          agentEngine: row.engine as AgentEngine,
          agentConfigVersion: row.version,
          agentConfig: row.config,
          twilioCallSid: row.twilio_call_sid,
          twilioAccountSid: row.twilio_account_sid,
          fromNumber: row.from_number,
          toNumber: row.to_number,
          startedAt: new Date(row.started_at),
          variables: toCallRecordVariables(row.variables),
          answeredBy: row.answered_by,
          voicemailMessage: row.voicemail_message,
          testRunId: row.test_run_id,
          direction: row.direction,
        },
      };
    }
    // Refused: say why (for the log), from a plain read that changes nothing.
    const refused = await this.prisma.$queryRaw<Array<{ token_hash: string | null; used: boolean; account_matches: boolean }>>(Prisma.sql`
      SELECT stream_token_hash AS token_hash, stream_token_used_at IS NOT NULL AS used, ${accountMatches} AS account_matches
      FROM calls WHERE id = ${callId}::uuid`);
    const call = refused[0];
    if (!call || call.token_hash === null) return { outcome: 'missing' };
    if (call.token_hash !== tokenHash) return { outcome: 'mismatch' };
    if (!call.account_matches) return { outcome: 'wrong_account' };
    if (call.used) return { outcome: 'reused' };
    return { outcome: 'expired' };
  }

  /** Notes the media stream's end; the first end wins. Returns false when nothing changed. */
  async markStreamEnded(callId: string, at: Date): Promise<boolean> {
    if (!isUuid(callId)) return false;
    const { count } = await this.prisma.call.updateMany({
      where: { id: callId, streamEndedAt: null },
      data: { streamEndedAt: at },
    });
    return count === 1;
  }

  /**
   * The media heartbeat: the process carrying these calls' streams is alive. One statement for all
   * of a process's live calls, so a heartbeat costs one round trip whatever the number of calls.
   */
  async touchMediaSeen(callIds: readonly string[], at: Date): Promise<void> {
    const ids = callIds.filter(isUuid);
    if (ids.length === 0) return;
    await this.prisma.$executeRaw(Prisma.sql`
      UPDATE calls SET media_seen_at = ${at.toISOString()}::timestamptz
      WHERE id = ANY(${ids}::uuid[]) AND ended_at IS NULL AND end_reason IS NULL`);
  }

  /**
   * Calls that have not ended although nothing has carried them for a while: their media stream
   * started but has not been seen since `quietSince` (the process that carried it died, or could
   * not write its end), or it never started and the token it needed expired before `quietSince`.
   * Oldest first, at most `limit`.
   */
  async findQuiet(quietSince: Date, limit: number): Promise<QuietCall[]> {
    const since = quietSince.toISOString();
    const rows = await this.prisma.$queryRaw<
      Array<{
        id: string;
        organization_id: string | null;
        twilio_call_sid: string | null;
        twilio_account_sid: string;
        status: string;
        stream_started_at: Date | null;
        media_seen_at: Date | null;
      }>
    >(Prisma.sql`
      SELECT id, organization_id, twilio_call_sid, twilio_account_sid, status, stream_started_at, media_seen_at
      FROM calls
      WHERE ended_at IS NULL AND end_reason IS NULL
        AND (
          (stream_started_at IS NOT NULL AND COALESCE(media_seen_at, stream_started_at) < ${since}::timestamptz)
          OR (stream_started_at IS NULL AND stream_token_expires_at IS NOT NULL AND stream_token_expires_at < ${since}::timestamptz)
        )
      ORDER BY COALESCE(media_seen_at, stream_started_at, stream_token_expires_at)
      LIMIT ${limit}`);
    return rows.map((row) => ({
      id: row.id,
      organizationId: row.organization_id,
      twilioCallSid: row.twilio_call_sid,
      twilioAccountSid: row.twilio_account_sid,
      status: row.status,
      streamStartedAt: row.stream_started_at,
      mediaSeenAt: row.media_seen_at,
    }));
  }
}

/** SQL over `calls` (unaliased): the call belongs to the account that signed its media socket. */
/** Each edge claims only its own calls: a Twilio socket never a web call's stream, nor the console's socket a phone call's. */
function streamAccountCondition(account: StreamAccount): Prisma.Sql {
  if (account.kind === 'web') return Prisma.sql`calls.direction = 'web'`;
  if (account.kind === 'organization') return Prisma.sql`calls.direction <> 'web' AND calls.twilio_account_sid = ${account.accountSid}`;
  return Prisma.sql`calls.direction <> 'web' AND NOT EXISTS (SELECT 1 FROM organization_twilio_accounts t WHERE t.account_sid = calls.twilio_account_sid)`;
}
