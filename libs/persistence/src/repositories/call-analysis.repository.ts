import { Injectable } from '@nestjs/common';
import { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../prisma.service';
import { isUuid } from '../uuid';
import type { JsonValue } from './json';

export type CallAnalysisStatus = 'pending' | 'running' | 'completed' | 'failed';

export interface CallAnalysisRecord {
  callId: string;
  status: CallAnalysisStatus;
  attempts: number;
  summary: string | null;
  structuredData: JsonValue | null;
  /** Why the structured data does not match the schema (after the retry); null when it does, or when none was asked for. */
  structuredDataErrors: string[] | null;
  success: boolean | null;
  successReason: string | null;
  model: string | null;
  inputTokens: number;
  outputTokens: number;
  /** The last attempt's failure (an unreachable LLM...), kept until the job completes. */
  error: string | null;
  createdAt: Date;
  completedAt: Date | null;
}

/** A job the worker claimed. */
export interface ClaimedAnalysis {
  callId: string;
  organizationId: string;
  config: JsonValue;
  attempts: number;
}

export interface AnalysisResult {
  summary: string | null;
  structuredData: JsonValue | null;
  structuredDataErrors: string[] | null;
  success: boolean | null;
  successReason: string | null;
  model: string;
  inputTokens: number;
  outputTokens: number;
}

type Row = Prisma.CallAnalysisGetPayload<object>;

export function toCallAnalysisRecord(row: Row): CallAnalysisRecord {
  return {
    callId: row.callId,
    status: row.status as CallAnalysisStatus,
    attempts: row.attempts,
    summary: row.summary,
    structuredData: row.structuredData,
    structuredDataErrors: row.structuredDataErrors as string[] | null,
    success: row.success,
    successReason: row.successReason,
    model: row.model,
    inputTokens: row.inputTokens,
    outputTokens: row.outputTokens,
    error: row.error,
    createdAt: row.createdAt,
    completedAt: row.completedAt,
  };
}

/** call_analyses: the post-call analysis of each call, and the durable queue of those still to run. */
@Injectable()
export class CallAnalysisRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Queues the analysis of a call that just ended, in the transaction that ends it, when the agent
   * config version the call ran with has `analysis.enabled`: one statement, no row otherwise.
   * The job's config is that section, with the agent's own `llm` when it names none, so the job
   * needs nothing else from the config version.
   */
  async enqueueForEndedCall(tx: Prisma.TransactionClient, callId: string): Promise<boolean> {
    const inserted = await tx.$executeRaw(Prisma.sql`
      INSERT INTO call_analyses (call_id, organization_id, status, config)
      SELECT c.id, c.organization_id, 'pending',
        CASE WHEN v.config -> 'analysis' ? 'llm' THEN v.config -> 'analysis'
             ELSE (v.config -> 'analysis') || jsonb_build_object('llm', COALESCE(v.config -> 'llm', '{}'::jsonb)) END
      FROM calls c
      JOIN agent_config_versions v ON v.agent_id = c.agent_id AND v.version = c.agent_config_version
      WHERE c.id = ${callId}::uuid AND c.organization_id IS NOT NULL AND jsonb_typeof(v.config -> 'analysis') = 'object' AND v.config -> 'analysis' -> 'enabled' = 'true'::jsonb
      ON CONFLICT (call_id) DO NOTHING`);
    return inserted === 1;
  }

  /**
   * Claims up to `limit` due jobs (pending, or running with an expired lease: its worker died) for
   * `leaseMs`. SKIP LOCKED: processes never take the same job, and never wait for each other.
   */
  async claimDue(limit: number, leaseMs: number): Promise<ClaimedAnalysis[]> {
    return this.prisma.$queryRaw<ClaimedAnalysis[]>(Prisma.sql`
      UPDATE call_analyses a
      SET status = 'running', attempts = a.attempts + 1, lease_until = now() + make_interval(secs => ${leaseMs / 1000}), updated_at = now()
      WHERE a.call_id IN (
        SELECT call_id FROM call_analyses
        WHERE status IN ('pending', 'running') AND next_attempt_at <= now() AND (status = 'pending' OR lease_until < now())
        ORDER BY next_attempt_at
        LIMIT ${limit}
        FOR UPDATE SKIP LOCKED)
      RETURNING a.call_id AS "callId", a.organization_id AS "organizationId", a.config, a.attempts`);
  }

  /** Stores the result of a claimed job (in the caller's transaction, with its ledger lines and webhook). */
  async complete(tx: Prisma.TransactionClient, callId: string, result: AnalysisResult): Promise<CallAnalysisRecord | null> {
    const { count } = await tx.callAnalysis.updateMany({
      where: { callId, status: 'running' },
      data: {
        status: 'completed',
        summary: result.summary,
        structuredData: result.structuredData === null ? Prisma.DbNull : (result.structuredData as Prisma.InputJsonValue),
        structuredDataErrors: result.structuredDataErrors === null ? Prisma.DbNull : result.structuredDataErrors,
        success: result.success,
        successReason: result.successReason,
        model: result.model,
        inputTokens: { increment: result.inputTokens },
        outputTokens: { increment: result.outputTokens },
        error: null,
        leaseUntil: null,
        completedAt: new Date(),
        updatedAt: new Date(),
      },
    });
    if (count === 0) return null;
    const row = await tx.callAnalysis.findUnique({ where: { callId } });
    return row ? toCallAnalysisRecord(row) : null;
  }

  /** A failed attempt: tried again at `retryAt`, or failed for good when null. */
  async attemptFailed(callId: string, error: string, retryAt: Date | null): Promise<void> {
    await this.prisma.callAnalysis.updateMany({
      where: { callId, status: 'running' },
      data: retryAt
        ? { status: 'pending', error: error.slice(0, 1000), nextAttemptAt: retryAt, leaseUntil: null, updatedAt: new Date() }
        : { status: 'failed', error: error.slice(0, 1000), leaseUntil: null, completedAt: new Date(), updatedAt: new Date() },
    });
  }

  async find(organizationId: string, callId: string): Promise<CallAnalysisRecord | null> {
    if (!isUuid(callId) || !isUuid(organizationId)) return null;
    const row = await this.prisma.callAnalysis.findFirst({ where: { callId, organizationId } });
    return row ? toCallAnalysisRecord(row) : null;
  }

  /**
   * Queues the analysis again with `config` (a re-run through the API), keeping the tokens spent so
   * far. Refused ('running') while a worker holds it.
   */
  async rerun(organizationId: string, callId: string, config: Prisma.InputJsonValue): Promise<'queued' | 'running'> {
    const rows = await this.prisma.$queryRaw<Array<{ status: string }>>(Prisma.sql`
      INSERT INTO call_analyses (call_id, organization_id, status, config)
      VALUES (${callId}::uuid, ${organizationId}::uuid, 'pending', ${JSON.stringify(config)}::jsonb)
      ON CONFLICT (call_id) DO UPDATE
        SET status = 'pending', config = EXCLUDED.config, attempts = 0, next_attempt_at = now(), lease_until = NULL, error = NULL, updated_at = now()
        WHERE call_analyses.status <> 'running' OR call_analyses.lease_until < now()
      RETURNING status`);
    return rows.length === 1 ? 'queued' : 'running';
  }
}
