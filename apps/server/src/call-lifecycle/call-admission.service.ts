import { Inject, Injectable, Optional } from '@nestjs/common';
import {
  assertCallIdentity,
  BUDGET_EXCEEDED_REASON,
  budgetStatusAt,
  CAPACITY_REASON,
  callEventData,
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
  WEB_CALL_FROM,
  WEB_CALL_TO,
  WebhookOutbox,
  type Admission,
  type CallRecord,
  type CapacityRefusalSnapshot,
  type ConcurrencyPolicy,
  type ConcurrencySnapshot,
  type CreateInboundCallInput,
  type CreateOutboundCallInput,
  type CreateRejectedCallInput,
  type CreateWebCallInput,
  type Refusal,
  type Tx,
} from '@switchboard/persistence';
import { InferenceCapacityService } from '../inference/capacity/inference-capacity.service';
import { CallMetrics } from '../metrics/call-metrics';
import { enqueueCallEvent } from './call-webhook-events';
import { CONCURRENCY_POLICY } from './concurrency-policy';
import { KeyedSerialQueue, waitedTooLong } from './keyed-serial-queue';

/** An admission queued longer than this is dropped: the voice webhook's caller was declined at 8 s. */
const ADMISSION_QUEUE_MAX_WAIT_MS = 7_000;
/** Calls decided in one admission transaction at most. */
const MAX_ADMISSION_GROUP = 100;

/**
 * Opens call records: whether a new call may start (the organization's concurrency limit, its hard
 * budget) and the call row with its call.started event, decided in ONE transaction that holds the
 * organization's advisory lock, so concurrent calls can never both take the last free slot.
 */
@Injectable()
export class CallAdmissionService {
  /** One locked admission transaction per organization at a time in this process (see KeyedSerialQueue). */
  private readonly perOrganization = new KeyedSerialQueue();
  /** Per organization: inbound calls waiting for the admission running now to finish (the next group). */
  private readonly formingGroups = new Map<string, InboundEntry[]>();

  constructor(
    private readonly transactions: TransactionRunner,
    private readonly calls: CallRepository,
    private readonly outbox: WebhookOutbox,
    @Inject(CONCURRENCY_POLICY) private readonly policy: ConcurrencyPolicy,
    /** Absent where a test builds the service alone. */
    @Optional() private readonly metrics?: CallMetrics,
    /** This instance's inference capacity (INFERENCE_MAX_UTILISATION); absent where a test builds the service alone. */
    @Optional() private readonly capacity?: InferenceCapacityService,
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
    const outcome = await new Promise<InboundOutcome>((resolve, reject) => this.joinInboundGroup({ input, queuedAt: performance.now(), resolve, reject }));
    if (outcome === 'retry') return { admitted: true, call: await this.reissue(input) };
    this.count('inbound', outcome);
    return outcome;
  }

  private count(direction: string, admission: { admitted: true } | { admitted: false; reason: string }): void {
    if (admission.admitted) this.metrics?.admitted(direction);
    else this.metrics?.refused(direction, admission.reason);
  }

  /**
   * Calls of one organization that arrive while its previous admission runs are decided together,
   * in one transaction under the organization's lock (group admission): one read of the limits,
   * the count and the budget, one INSERT of the admitted calls, one outbox write. A burst of 250
   * calls costs tens of short transactions instead of 250 serialised ones, so every caller is
   * answered within Twilio's patience. Arrival order decides who gets the last free slots.
   */
  private joinInboundGroup(entry: InboundEntry): void {
    const organizationId = entry.input.organizationId;
    const forming = this.formingGroups.get(organizationId);
    if (forming && forming.length < MAX_ADMISSION_GROUP) {
      forming.push(entry);
      return;
    }
    const group = [entry];
    this.formingGroups.set(organizationId, group);
    this.perOrganization
      .run(organizationId, () => {
        // From here on, later arrivals form the next group.
        if (this.formingGroups.get(organizationId) === group) this.formingGroups.delete(organizationId);
        return this.admitGroup(organizationId, group);
      })
      .catch((error: unknown) => {
        if (this.formingGroups.get(organizationId) === group) this.formingGroups.delete(organizationId);
        for (const member of group) member.reject(error);
      });
  }

  private async admitGroup(organizationId: string, group: InboundEntry[]): Promise<void> {
    // Each member's own wait counts: one that waited too long is dropped, the rest are decided.
    const live = group.filter((member) => {
      const stale = waitedTooLong(member.queuedAt, ADMISSION_QUEUE_MAX_WAIT_MS);
      if (stale) member.reject(stale);
      return stale === null;
    });
    if (live.length === 0) return;
    const outcomes = await this.transactions.run((tx) => this.decideGroup(tx, organizationId, live.map((member) => member.input)));
    const admitted = outcomes.filter((outcome) => outcome !== 'retry' && outcome.admitted).length;
    if (admitted > 0) this.outbox.committed(admitted);
    live.forEach((member, index) => member.resolve(outcomes[index] as InboundOutcome));
  }

  private async decideGroup(tx: Tx, organizationId: string, inputs: readonly CreateInboundCallInput[]): Promise<InboundOutcome[]> {
    await lockOrganizationCalls(tx, organizationId);
    const earlier = await this.calls.findEndReasonsBySids(tx, inputs.map((input) => input.twilioCallSid));
    let snapshot = await readConcurrency(tx, organizationId, this.policy);
    const at = inputs[0]?.at ?? new Date();
    const budget = await this.hardBudget(tx, organizationId, at);
    const outcomes: Array<InboundOutcome | { admit: CreateInboundCallInput }> = [];
    const seen = new Set<string>();
    for (const input of inputs) {
      const earlierReason = earlier.get(input.twilioCallSid);
      // A Twilio retry of a refused call is refused again, for the reason it was (counted once).
      if (earlierReason !== undefined && isRefusalReason(earlierReason)) {
        outcomes.push({ admitted: false, ...(earlierReason === CONCURRENCY_LIMIT_REASON ? { reason: earlierReason, snapshot } : await this.repeatedRefusal(tx, organizationId, earlierReason, at)) });
        continue;
      }
      // Recorded before (or earlier in this group): Twilio retried; the call gets a fresh token.
      if (earlierReason !== undefined || seen.has(input.twilioCallSid)) {
        outcomes.push('retry');
        continue;
      }
      seen.add(input.twilioCallSid);
      const refusal = refusalOf(snapshot, budget) ?? this.capacityRefusal();
      if (refusal) {
        const data = callIdentityData(input);
        await this.calls.insert(tx, { ...data, organizationId, agentId: input.agentId, endReason: refusal.reason, endedAt: data.startedAt });
        await recordRefusal(tx, { organizationId, direction: 'inbound', fromNumber: input.fromNumber, toNumber: input.toNumber, refusal, at: data.startedAt });
        outcomes.push({ admitted: false, ...refusal });
        continue;
      }
      snapshot = { ...snapshot, activeCalls: snapshot.activeCalls + 1 };
      outcomes.push({ admit: input });
    }
    const toInsert = outcomes.flatMap((outcome) => (typeof outcome === 'object' && 'admit' in outcome ? [outcome.admit] : []));
    const inserted = await this.calls.insertMany(tx, toInsert.map((input) => inboundCallData(input)));
    // The calls and their call.started webhook events commit together (transactional outbox).
    await this.outbox.enqueue(tx, inserted.map((call) => ({ organizationId, type: 'call.started' as const, callId: call.id, data: callEventData(call) })));
    let next = 0;
    return outcomes.map((outcome) => (typeof outcome === 'object' && 'admit' in outcome ? { admitted: true as const, call: inserted[next++] as CallRecord } : outcome));
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
    const queuedAt = performance.now();
    const outcome = await this.perOrganization.run(input.organizationId, async () => {
      const stale = waitedTooLong(queuedAt, ADMISSION_QUEUE_MAX_WAIT_MS);
      if (stale) throw stale;
      return this.transactions.run((tx) => this.reserveOutboundLocked(tx, input, startedAt));
    });
    if (outcome.admitted) this.outbox.committed(1);
    this.count('outbound', outcome);
    return outcome;
  }

  /** Under the organization's lock: the outbound call's place, or the refusal (counted). */
  private async reserveOutboundLocked(tx: Tx, input: CreateOutboundCallInput, startedAt: Date): Promise<Admission<CallRecord>> {
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
      voicemailMessage: input.voicemailMessage ?? null,
      campaignContactId: input.campaignAttempt?.contactId ?? null,
      campaignAttempt: input.campaignAttempt?.attempt ?? null,
    });
    await enqueueCallEvent(this.outbox, tx, 'call.started', call);
    return { admitted: true, call };
  }

  /**
   * Admits a call from the browser under the same lock and rule as a phone call (concurrency limit,
   * hard budget): the row is live at once ('in-progress', answered now), with its stream token.
   */
  async admitWeb(input: CreateWebCallInput): Promise<Admission<CallRecord>> {
    if (!isUuid(input.organizationId) || !isUuid(input.agentId)) throw invalidInput('Invalid organization or agent id');
    const startedAt = input.at ?? new Date();
    const queuedAt = performance.now();
    const outcome = await this.perOrganization.run(input.organizationId, async () => {
      const stale = waitedTooLong(queuedAt, ADMISSION_QUEUE_MAX_WAIT_MS);
      if (stale) throw stale;
      return this.transactions.run(async (tx): Promise<Admission<CallRecord>> => {
        await lockOrganizationCalls(tx, input.organizationId);
        const refusal = await this.refusalFor(tx, input.organizationId, startedAt);
        if (refusal) {
          await recordRefusal(tx, { organizationId: input.organizationId, direction: 'web', fromNumber: WEB_CALL_FROM, toNumber: WEB_CALL_TO, refusal, at: startedAt });
          return { admitted: false, ...refusal };
        }
        const call = await this.calls.insert(tx, {
          twilioCallSid: null,
          twilioAccountSid: null,
          direction: 'web',
          fromNumber: WEB_CALL_FROM,
          toNumber: WEB_CALL_TO,
          status: 'in-progress',
          startedAt,
          answeredAt: startedAt,
          statusTimeline: [{ status: 'in-progress', at: startedAt.toISOString(), sequenceNumber: null }],
          organizationId: input.organizationId,
          agentId: input.agentId,
          agentConfigVersion: input.agentConfigVersion,
          variables: input.variables,
          streamTokenHash: input.streamTokenHash,
          streamTokenExpiresAt: input.streamTokenExpiresAt,
          testRunId: input.testRunId ?? null,
        });
        await enqueueCallEvent(this.outbox, tx, 'call.started', call);
        return { admitted: true, call };
      });
    });
    if (outcome.admitted) this.outbox.committed(1);
    this.count('web', outcome);
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

  /**
   * The rule: over the concurrency limit, or out of budget when the organization chose a hard limit,
   * or (checked last, because an admission reserves capacity) this instance's inference workers
   * planned full; null admits.
   */
  private async refusalFor(tx: Tx, organizationId: string, at: Date): Promise<Refusal | null> {
    const snapshot = await readConcurrency(tx, organizationId, this.policy);
    return refusalOf(snapshot, isOverLimit(snapshot) ? null : await this.hardBudget(tx, organizationId, at)) ?? this.capacityRefusal();
  }

  /** Reserves this instance's inference capacity for one more call, or the refusal saying it is planned full. */
  private capacityRefusal(): Refusal | null {
    const decision = this.capacity?.tryAdmit();
    return decision && !decision.admitted ? { reason: CAPACITY_REASON, capacity: capacitySnapshotOf(decision.snapshot) } : null;
  }

  /** The month's spend against the budget, read only for organizations that refuse calls over it (the voice webhook waits on this). */
  private async hardBudget(tx: Tx, organizationId: string, at: Date): Promise<HardBudget | null> {
    return (await hasHardBudget(tx, organizationId)) ? budgetStatusAt(tx, organizationId, at) : null;
  }

  /** The refusal a retried webhook gets again, described with today's numbers even if they would now admit it. */
  private async repeatedRefusal(tx: Tx, organizationId: string, reason: Refusal['reason'], at: Date): Promise<Refusal> {
    if (reason === CONCURRENCY_LIMIT_REASON) return { reason, snapshot: await readConcurrency(tx, organizationId, this.policy) };
    if (reason === CAPACITY_REASON) return { reason, capacity: capacitySnapshotOf(this.capacity?.snapshot()) };
    const budget = await budgetStatusAt(tx, organizationId, at);
    if (!budget) throw new PersistenceError('not_found', `Organization ${organizationId} does not exist`);
    return { reason, budget };
  }

  /** The call and its call.started webhook event commit together (transactional outbox). */
  private async insertInbound(tx: Tx, input: CreateInboundCallInput): Promise<CallRecord> {
    const call = await this.calls.insert(tx, inboundCallData(input));
    await enqueueCallEvent(this.outbox, tx, 'call.started', call);
    return call;
  }

  private async reissue(input: CreateInboundCallInput): Promise<CallRecord> {
    const call = await this.calls.reissueStreamToken(input);
    if (!call) throw new PersistenceError('conflict', `A call with CallSid ${input.twilioCallSid} is already recorded`);
    return call;
  }
}

type InboundOutcome = Admission<CallRecord> | 'retry';
type HardBudget = NonNullable<Awaited<ReturnType<typeof budgetStatusAt>>>;

/** The rule: over the concurrency limit, or out of budget when the organization chose a hard limit; null admits. */
function refusalOf(snapshot: ConcurrencySnapshot, budget: HardBudget | null): Refusal | null {
  if (isOverLimit(snapshot)) return { reason: CONCURRENCY_LIMIT_REASON, snapshot };
  if (budget && isBudgetExhausted(budget)) return { reason: BUDGET_EXCEEDED_REASON, budget };
  return null;
}

interface InboundEntry {
  input: CreateInboundCallInput;
  queuedAt: number;
  resolve: (outcome: InboundOutcome) => void;
  reject: (error: unknown) => void;
}

/** The row of an admitted inbound call. */
function inboundCallData(input: CreateInboundCallInput) {
  return {
    ...callIdentityData(input),
    organizationId: input.organizationId,
    agentId: input.agentId,
    agentConfigVersion: input.agentConfigVersion,
    streamTokenHash: input.streamTokenHash,
    streamTokenExpiresAt: input.streamTokenExpiresAt,
  };
}

function assertInbound(input: CreateInboundCallInput): void {
  assertCallIdentity(input);
  if (!isUuid(input.organizationId) || !isUuid(input.agentId)) throw invalidInput('Invalid organization or agent id');
}

function isRefusalReason(reason: string | null): reason is Refusal['reason'] {
  return reason === CONCURRENCY_LIMIT_REASON || reason === BUDGET_EXCEEDED_REASON || reason === CAPACITY_REASON;
}

/** The figures a capacity refusal carries (and a retried webhook's repeated one, with today's figures). */
function capacitySnapshotOf(snapshot: ReturnType<InferenceCapacityService['snapshot']> | undefined): CapacityRefusalSnapshot {
  return {
    workers: snapshot?.workers ?? 0,
    maxUtilisation: snapshot?.maxUtilisation ?? 0,
    predictedUtilisation: snapshot?.predictedUtilisation ?? null,
    costPerCall: snapshot?.costPerCall ?? null,
    liveCalls: snapshot?.liveCalls ?? 0,
    reservedCalls: snapshot?.reservedCalls ?? 0,
  };
}
