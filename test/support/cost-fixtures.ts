import { randomBytes } from 'node:crypto';
import { CostRepository } from '../../libs/persistence/src/billing/cost.repository';
import { NO_MEASURED_USAGE, type MeasuredCallUsage, type PriceCatalogPrices } from '../../libs/billing/src';
import type { PrismaService } from '../../libs/persistence/src/prisma.service';
import type { CreateInboundCallInput } from '../../libs/persistence/src/repositories/call-identity';
import { hashSecret } from '../../libs/persistence/src/secret-hash';
import type { WebhookEventType } from '../../libs/persistence/src/webhooks/webhook-event-types';
import { WebhookSubscriptionRepository } from '../../libs/persistence/src/webhooks/webhook-subscription.repository';
import { createRepositories, createTestOrganization, inboundCallInput, type TestRepositories } from './database';

/*
 * Cost-ledger test fixtures. Calls are placed at fixed instants (the caller chooses them) so that the
 * catalog in force, the UTC day and the budget month of every call are known to the test; each test
 * works in an organization of its own, so fixed instants never meet another test's rows.
 */

/** Long before any test call: a catalog version "in force since forever" for the test's purposes. */
export const LONG_AGO = new Date('2020-01-01T00:00:00.000Z');

/** A stored ledger line with its bigints as numbers (test amounts are small). */
export interface LedgerLine {
  id: string;
  kind: string;
  reason: string | null;
  component: string;
  quantity: number;
  unit: string;
  unitPriceMicros: number;
  unitSize: number;
  pricePer: string;
  amountMicros: number;
  catalogId: string;
  currency: string;
}

export interface StartedCall {
  callId: string;
  callSid: string;
  input: CreateInboundCallInput;
}

export interface CallPlan {
  organizationId: string;
  agentId: string;
  startedAt: Date;
  /** Default true: the media stream is claimed 1 s after the start, so finalise prices the call. */
  withStream?: boolean;
}

export function secondsAfter(at: Date, seconds: number): Date {
  return new Date(at.getTime() + seconds * 1_000);
}

export class CostFixtures {
  readonly repos: TestRepositories;
  readonly costs: CostRepository;
  private readonly subscriptions: WebhookSubscriptionRepository;

  constructor(readonly prisma: PrismaService) {
    this.repos = createRepositories(prisma);
    this.costs = new CostRepository(prisma);
    this.subscriptions = new WebhookSubscriptionRepository(prisma);
  }

  /** A new organization; `subscribeTo` makes the outbox store those events (it stores none without a subscriber). */
  async organization(subscribeTo: WebhookEventType[] = ['call.cost', 'usage.threshold']): Promise<string> {
    const { id } = await createTestOrganization(this.repos, 'costs');
    await this.subscriptions.create({ organizationId: id, url: 'https://receiver.example/costs', events: subscribeTo });
    return id;
  }

  async agent(organizationId: string, name = 'cost agent'): Promise<string> {
    return (await this.repos.agents.create({ organizationId, name, engine: 'echo', config: { greeting: 'hi' } })).id;
  }

  /**
   * A catalog version written straight to the table: the repository refuses effective dates in the
   * past (rightly, for real users), and tests need versions in force before their fixed call instants.
   */
  async insertCatalog(input: { organizationId: string; version: number; prices: unknown; effectiveFrom: Date; currency?: string; setBy?: 'operator' | 'organization' }): Promise<string> {
    const row = await this.prisma.priceCatalog.create({
      data: {
        organizationId: input.organizationId,
        // The operator's prices for the organization: what its calls are billed with.
        setBy: input.setBy ?? 'operator',
        version: input.version,
        currency: input.currency ?? 'USD',
        prices: input.prices as PriceCatalogPrices,
        effectiveFrom: input.effectiveFrom,
      },
    });
    return row.id;
  }

  /** The incoming-call input of a call answered at `startedAt`, its stream token valid for 10 minutes. */
  inboundInput(plan: Pick<CallPlan, 'organizationId' | 'agentId' | 'startedAt'>): { input: CreateInboundCallInput; rawToken: string } {
    return inboundCallInput(plan.organizationId, plan.agentId, { streamTokenExpiresAt: secondsAfter(plan.startedAt, 600), at: plan.startedAt });
  }

  /** An answered inbound call, with its media stream claimed 1 s after the start unless withStream is false. */
  async startInbound(plan: CallPlan): Promise<StartedCall> {
    const { input, rawToken } = this.inboundInput(plan);
    const call = await this.repos.admission.recordInbound(input);
    if (plan.withStream !== false) {
      const claim = await this.repos.callStreams.claimMediaStream({
        callId: call.id,
        tokenHash: hashSecret(rawToken),
        streamSid: `MZ${randomBytes(16).toString('hex')}`,
        now: secondsAfter(plan.startedAt, 1),
      });
      if (claim.outcome !== 'ok') throw new Error(`stream claim refused: ${claim.outcome}`);
    }
    return { callId: call.id, callSid: input.twilioCallSid, input };
  }

  /** startInbound, then finalise `seconds` after the start with what the media path measured. */
  async endedCall(plan: CallPlan & { seconds: number; usage?: Partial<MeasuredCallUsage> }): Promise<StartedCall> {
    const call = await this.startInbound(plan);
    const applied = await this.repos.callEnds.finalise(call.callId, {
      endReason: 'caller_hangup',
      endedAt: secondsAfter(plan.startedAt, plan.seconds),
      usage: { ...NO_MEASURED_USAGE, ...plan.usage },
    });
    if (!applied) throw new Error('finalise did not apply');
    return call;
  }

  /** Twilio's final status callback ('completed') with its durations. */
  completed(callSid: string, at: Date, durations: { billedMinutes?: number; callDurationSeconds?: number }): Promise<boolean> {
    return this.repos.callEnds.applyStatusCallback({ twilioCallSid: callSid, status: 'completed', at, ...durations });
  }

  async ledger(callId: string): Promise<LedgerLine[]> {
    const rows = await this.prisma.costLedgerLine.findMany({ where: { callId }, orderBy: { id: 'asc' } });
    return rows.map((row) => ({
      id: row.id.toString(),
      kind: row.kind,
      reason: row.reason,
      component: row.component,
      quantity: Number(row.quantity),
      unit: row.unit,
      unitPriceMicros: Number(row.unitPriceMicros),
      unitSize: Number(row.unitSize),
      pricePer: row.pricePer,
      amountMicros: Number(row.amountMicros),
      catalogId: row.catalogId,
      currency: row.currency,
    }));
  }

  /** The call's charge lines keyed by component, as `{ quantity, amountMicros }`. */
  async chargedByComponent(callId: string): Promise<Record<string, { quantity: number; amountMicros: number }>> {
    const charged = (await this.ledger(callId)).filter((line) => line.kind === 'charge');
    return Object.fromEntries(charged.map((line) => [line.component, { quantity: line.quantity, amountMicros: line.amountMicros }]));
  }

  callCostRow(callId: string) {
    return this.prisma.callCost.findUnique({ where: { callId } });
  }

  /** The `data` of the organization's stored webhook events of one type, oldest first. */
  async eventData(organizationId: string, type: WebhookEventType): Promise<Array<Record<string, unknown>>> {
    const events = await this.prisma.webhookEvent.findMany({ where: { organizationId, type }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
    return events.map((event) => (event.payload as { data: Record<string, unknown> }).data);
  }
}
