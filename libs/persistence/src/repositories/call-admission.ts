import { Prisma } from '../generated/prisma/client';
import { PersistenceError } from '../persistence.errors';
import type { BUDGET_EXCEEDED_REASON, BudgetStatus } from '../billing/budgets';

/** The reason stored on a refused call and its call_refusals row. */
export const CONCURRENCY_LIMIT_REASON = 'concurrency_limit';
/** Refused because this instance's inference workers are planned full (INFERENCE_MAX_UTILISATION). */
export const CAPACITY_REASON = 'capacity';

/** The inference capacity of the instance that refused a call for it. */
export interface CapacityRefusalSnapshot {
  workers: number;
  maxUtilisation: number;
  /** The workers' planned share with the calls live and reserved there (the refused call not counted). */
  predictedUtilisation: number | null;
  /** Worker-seconds per second one more call was predicted to cost: it did not fit. */
  costPerCall: number | null;
  liveCalls: number;
  reservedCalls: number;
}

/** The deployment's settings that an organization's own concurrency limit is read against. */
export interface ConcurrencyPolicy {
  /** MAX_CONCURRENT_CALLS_PER_ORG: the limit of an organization that set none. */
  defaultLimit: number;
  /** MAX_CONCURRENT_CALLS_CAP: the ceiling of an organization the operator gave no cap of its own. */
  cap: number;
}

/** The organization's limit in force and how many of its calls are live right now. */
export interface ConcurrencySnapshot {
  /** The organization's own setting (null = the deployment default). */
  ownLimit: number | null;
  /** The operator's ceiling for this organization (its own cap, else the deployment's). */
  cap: number;
  /** What is enforced: ownLimit (else the default), never above the cap. */
  limit: number;
  activeCalls: number;
}

/**
 * A call is live until it has an end reason or an end time. Two more cases count as over, so that a
 * lost status callback or a crash cannot leak a slot forever:
 *  - its media stream never started and its stream token has expired: it can no longer connect,
 *    so it holds no agent (outbound calls still ringing have no token yet and stay counted);
 *  - an outbound call still without a CallSid long after calls.create must have answered (the
 *    server died between reserving the call and placing it).
 */
export const LIVE_CALL_CONDITION = Prisma.sql`
  c.ended_at IS NULL AND c.end_reason IS NULL
  AND NOT (c.stream_started_at IS NULL AND c.stream_token_expires_at IS NOT NULL AND c.stream_token_expires_at < now())
  AND NOT (c.twilio_call_sid IS NULL AND c.created_at < now() - interval '5 minutes')`;

/**
 * Serialises every admission decision of one organization: the count and the insert that follows
 * it happen under the lock, so concurrent requests can never both see the last free slot. The lock
 * is transaction-scoped (released at commit or rollback); other organizations are not blocked.
 */
export async function lockOrganizationCalls(tx: Prisma.TransactionClient, organizationId: string): Promise<void> {
  await tx.$executeRaw(Prisma.sql`SELECT pg_advisory_xact_lock(hashtextextended(${`switchboard:calls:${organizationId}`}, 0))`);
}

/** Reads the limit and the live-call count (call under lockOrganizationCalls to act on them). */
export async function readConcurrency(
  db: Pick<Prisma.TransactionClient, '$queryRaw'>,
  organizationId: string,
  policy: ConcurrencyPolicy,
): Promise<ConcurrencySnapshot> {
  const rows = await db.$queryRaw<Array<{ own_limit: number | null; own_cap: number | null; active_calls: number }>>(Prisma.sql`
    SELECT o.max_concurrent_calls AS own_limit, o.max_concurrent_calls_cap AS own_cap,
           (SELECT count(*)::int FROM calls c WHERE c.organization_id = o.id AND ${LIVE_CALL_CONDITION}) AS active_calls
    FROM organizations o
    WHERE o.id = ${organizationId}::uuid`);
  const row = rows[0];
  if (!row) throw new PersistenceError('not_found', `Organization ${organizationId} does not exist`);
  const cap = row.own_cap ?? policy.cap;
  // A limit saved before the cap was lowered still never lets the organization past the cap.
  return { ownLimit: row.own_limit, cap, limit: Math.min(row.own_limit ?? policy.defaultLimit, cap), activeCalls: row.active_calls };
}

export function isOverLimit(snapshot: ConcurrencySnapshot): boolean {
  return snapshot.activeCalls >= snapshot.limit;
}

/** Why a call was turned away, with the numbers that decided it. */
export type Refusal =
  | { reason: typeof CONCURRENCY_LIMIT_REASON; snapshot: ConcurrencySnapshot }
  | { reason: typeof BUDGET_EXCEEDED_REASON; budget: BudgetStatus & { currency: string } }
  | { reason: typeof CAPACITY_REASON; capacity: CapacityRefusalSnapshot };

export interface RefusalInput {
  organizationId: string;
  direction: 'inbound' | 'outbound' | 'web';
  fromNumber: string | null;
  toNumber: string | null;
  refusal: Refusal;
  at: Date;
}

/** Counts a refused call (call_refusals is the durable record GET /v1/organization reports). */
export async function recordRefusal(tx: Prisma.TransactionClient, input: RefusalInput): Promise<void> {
  const snapshot = input.refusal.reason === CONCURRENCY_LIMIT_REASON ? input.refusal.snapshot : null;
  await tx.callRefusal.create({
    data: {
      organizationId: input.organizationId,
      direction: input.direction,
      reason: input.refusal.reason,
      fromNumber: input.fromNumber,
      toNumber: input.toNumber,
      limit: snapshot?.limit ?? null,
      activeCalls: snapshot?.activeCalls ?? null,
      at: input.at,
    },
  });
}

/** A call admitted, or refused and why. */
export type Admission<T> = { admitted: true; call: T } | ({ admitted: false } & Refusal);

export const MACHINE_DETECTION_MODES = ['Enable', 'DetectMessageEnd'] as const;
export type MachineDetectionMode = (typeof MACHINE_DETECTION_MODES)[number];

export interface CreateOutboundCallInput {
  organizationId: string;
  agentId: string;
  agentConfigVersion: number;
  twilioAccountSid: string;
  /** One of the organization's numbers (checked by the caller). */
  fromNumber: string;
  toNumber: string;
  variables: Record<string, string>;
  machineDetection: MachineDetectionMode | null;
  /** The voicemail to leave when a machine answers (only with DetectMessageEnd); null: none. */
  voicemailMessage?: string | null;
  /** A campaign's call: the contact and which of its attempts (unique together: an attempt is placed once). */
  campaignAttempt?: { contactId: string; attempt: number };
  at?: Date;
}

/** A call from the browser: no Twilio account, no CallSid; its media socket presents the stream token. */
export interface CreateWebCallInput {
  organizationId: string;
  agentId: string;
  agentConfigVersion: number;
  variables: Record<string, string>;
  streamTokenHash: string;
  streamTokenExpiresAt: Date;
  /** The scenario test run placing the call (see AgentTestRepository); absent for a person's call. */
  testRunId?: string;
  at?: Date;
}

/** What a web call shows where a phone call has numbers (and what {{caller.number}} renders). */
export const WEB_CALL_FROM = 'browser';
export const WEB_CALL_TO = 'web';

export interface IssueOutboundStreamTokenInput {
  callId: string;
  /** The account whose signed TwiML request this is: only the account that placed the call may connect it. */
  twilioAccountSid: string;
  /** The CallSid Twilio's signed TwiML request carries; it must be the call's (or the call has none yet). */
  twilioCallSid: string;
  streamTokenHash: string;
  streamTokenExpiresAt: Date;
}

export interface AnsweredByInput {
  twilioCallSid: string;
  /** Twilio's AnsweredBy: human, machine_start, machine_end_beep, machine_end_silence, machine_end_other, fax, unknown. */
  answeredBy: string;
  /** Twilio's MachineDetectionDuration, when sent. */
  detectionDurationMs?: number;
  at: Date;
}
