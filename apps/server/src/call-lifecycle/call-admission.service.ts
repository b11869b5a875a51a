import { Inject, Injectable } from '@nestjs/common';
import {
  assertCallIdentity,
  BUDGET_EXCEEDED_REASON,
  budgetStatusAt,
  callIdentityData,
  CallRepository,
  CONCURRENCY_LIMIT_REASON,
  hasHardBudget,
  invalidInput,
  isBudgetExhausted,
  isOverLimit,
  isUuid,
  lockOrganizationCalls,
  PersistenceError,
  readConcurrency,
  recordRefusal,
  TransactionRunner,
  WebhookOutbox,
  type Admission,
  type CallRecord,
  type ConcurrencyPolicy,
  type CreateInboundCallInput,
  type CreateOutboundCallInput,
  type CreateRejectedCallInput,
  type Refusal,
  type Tx,
} from '@switchboard/persistence';
import { enqueueCallEvent } from './call-webhook-events';
import { CONCURRENCY_POLICY } from './concurrency-policy';

/**
 * Opens call records: whether a new call may start (the organization's concurrency limit, its hard
 * budget) and the call row with its call.started event, decided in ONE transaction that holds the
 * organization's advisory lock, so concurrent calls can never both take the last free slot.
 */
@Injectable()
export class CallAdmissionService {
  constructor(
    private readonly transactions: TransactionRunner,
    private readonly calls: CallRepository,
    private readonly outbox: WebhookOutbox,
    @Inject(CONCURRENCY_POLICY) private readonly policy: ConcurrencyPolicy,
  ) {}

  /**
   * Records an answered inbound call (no limit checked), with the hash of the token its media stream
   * must present. Twilio retries the voice webhook when our answer was slow or lost: while the call's
   * stream has not started, the retry gets the same call with a fresh token (the earlier one is void);
   * after that the CallSid is taken for good and the retry is a conflict.
   */
  async recordInbound(input: CreateInboundCallInput): Promise<CallRecord> {
    assertInbound(input);
    try {
      const call = await this.transactions.run((tx) => this.insertInbound(tx, input));
      this.outbox.committed(1);
      return call;
    } catch (error) {
      if (!(error instanceof PersistenceError && error.code === 'conflict')) throw error;
      return this.reissue(input);
    }
  }

  /**
   * recordInbound under the organization's concurrency limit and hard budget. Over either, the call
   * is stored as rejected (end reason 'concurrency_limit' / 'budget_exceeded') and counted in
   * call_refusals. A Twilio retry of a webhook already answered gets the same answer again: the
   * admitted call with a fresh token, or the refusal (counted once).
   */
  async admitInbound(input: CreateInboundCallInput): Promise<Admission<CallRecord>> {
    assertInbound(input);
    const outcome = await this.transactions.run(async (tx): Promise<Admission<CallRecord> | 'retry'> => {
      await lockOrganizationCalls(tx, input.organizationId);
      const data = callIdentityData(input);
      const earlier = await this.calls.findEndReasonBySid(tx, input.twilioCallSid);
      // A Twilio retry of a refused call is refused again, for the reason it was (counted once).
      if (earlier && isRefusalReason(earlier.endReason)) return { admitted: false, ...(await this.repeatedRefusal(tx, input.organizationId, earlier.endReason, data.startedAt)) };
      if (earlier) return 'retry';
      const refusal = await this.refusalFor(tx, input.organizationId, data.startedAt);
      if (refusal) {
        await this.calls.insert(tx, { ...data, organizationId: input.organizationId, agentId: input.agentId, endReason: refusal.reason, endedAt: data.startedAt });
        await recordRefusal(tx, { organizationId: input.organizationId, direction: 'inbound', fromNumber: input.fromNumber, toNumber: input.toNumber, refusal, at: data.startedAt });
        return { admitted: false, ...refusal };
      }
      return { admitted: true, call: await this.insertInbound(tx, input) };
    });
    if (outcome === 'retry') return { admitted: true, call: await this.reissue(input) };
    if (outcome.admitted) this.outbox.committed(1);
    return outcome;
  }

  /**
   * Reserves an outbound call's place under the limit (same lock and rule as admitInbound) BEFORE
   * Twilio is asked to dial: the row is live from here on, with no CallSid until Twilio answers.
   * Over the limit nothing is stored but the call_refusals row.
   */
  async reserveOutbound(input: CreateOutboundCallInput): Promise<Admission<CallRecord>> {
    if (!isUuid(input.organizationId) || !isUuid(input.agentId)) throw invalidInput('Invalid organization or agent id');
    for (const field of ['twilioAccountSid', 'fromNumber', 'toNumber'] as const) {
      if (input[field].trim().length === 0) throw invalidInput(`${field} must not be empty`);
    }
    const startedAt = input.at ?? new Date();
    const outcome = await this.transactions.run(async (tx): Promise<Admission<CallRecord>> => {
      await lockOrganizationCalls(tx, input.organizationId);
      const refusal = await this.refusalFor(tx, input.organizationId, startedAt);
      if (refusal) {
        await recordRefusal(tx, { organizationId: input.organizationId, direction: 'outbound', fromNumber: input.fromNumber, toNumber: input.toNumber, refusal, at: startedAt });
        return { admitted: false, ...refusal };
      }
      const call = await this.calls.insert(tx, {
        twilioCallSid: null,
        twilioAccountSid: input.twilioAccountSid,
        direction: 'outbound',
        fromNumber: input.fromNumber,
        toNumber: input.toNumber,
        status: 'queued',
        startedAt,
        statusTimeline: [{ status: 'queued', at: startedAt.toISOString(), sequenceNumber: null }],
        organizationId: input.organizationId,
        agentId: input.agentId,
        agentConfigVersion: input.agentConfigVersion,
        variables: input.variables,
        machineDetection: input.machineDetection,
      });
      await enqueueCallEvent(this.outbox, tx, 'call.started', call);
      return { admitted: true, call };
    });
    if (outcome.admitted) this.outbox.committed(1);
    return outcome;
  }

  /** Records a call turned away on arrival (e.g. unknown number); it is final at once. */
  async recordRejected(input: CreateRejectedCallInput): Promise<CallRecord> {
    assertCallIdentity(input);
    if (input.endReason.trim().length === 0) throw invalidInput('endReason must not be empty');
    const data = callIdentityData(input);
    return this.transactions.run((tx) =>
      this.calls.insert(tx, { ...data, organizationId: input.organizationId ?? null, agentId: input.agentId ?? null, endReason: input.endReason, endedAt: data.startedAt }),
    );
  }

  /** The rule: over the concurrency limit, or out of budget when the organization chose a hard limit; null admits. */
  private async refusalFor(tx: Tx, organizationId: string, at: Date): Promise<Refusal | null> {
    const snapshot = await readConcurrency(tx, organizationId, this.policy);
    if (isOverLimit(snapshot)) return { reason: CONCURRENCY_LIMIT_REASON, snapshot };
    // Spend is only summed for organizations that refuse calls over budget: the voice webhook waits on this.
    if (!(await hasHardBudget(tx, organizationId))) return null;
    const budget = await budgetStatusAt(tx, organizationId, at);
    if (budget && isBudgetExhausted(budget)) return { reason: BUDGET_EXCEEDED_REASON, budget };
    return null;
  }

  /** The refusal a retried webhook gets again, described with today's numbers even if they would now admit it. */
  private async repeatedRefusal(tx: Tx, organizationId: string, reason: Refusal['reason'], at: Date): Promise<Refusal> {
    if (reason === CONCURRENCY_LIMIT_REASON) return { reason, snapshot: await readConcurrency(tx, organizationId, this.policy) };
    const budget = await budgetStatusAt(tx, organizationId, at);
    if (!budget) throw new PersistenceError('not_found', `Organization ${organizationId} does not exist`);
    return { reason, budget };
  }

  /** The call and its call.started webhook event commit together (transactional outbox). */
  private async insertInbound(tx: Tx, input: CreateInboundCallInput): Promise<CallRecord> {
    const call = await this.calls.insert(tx, {
      ...callIdentityData(input),
      organizationId: input.organizationId,
      agentId: input.agentId,
      agentConfigVersion: input.agentConfigVersion,
      streamTokenHash: input.streamTokenHash,
      streamTokenExpiresAt: input.streamTokenExpiresAt,
    });
    await enqueueCallEvent(this.outbox, tx, 'call.started', call);
    return call;
  }

  private async reissue(input: CreateInboundCallInput): Promise<CallRecord> {
    const call = await this.calls.reissueStreamToken(input);
    if (!call) throw new PersistenceError('conflict', `A call with CallSid ${input.twilioCallSid} is already recorded`);
    return call;
  }
}

function assertInbound(input: CreateInboundCallInput): void {
  assertCallIdentity(input);
  if (!isUuid(input.organizationId) || !isUuid(input.agentId)) throw invalidInput('Invalid organization or agent id');
}

function isRefusalReason(reason: string | null): reason is Refusal['reason'] {
  return reason === CONCURRENCY_LIMIT_REASON || reason === BUDGET_EXCEEDED_REASON;
}
