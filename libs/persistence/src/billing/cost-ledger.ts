import {
  callMetersSchema,
  correctionLines,
  formatMicros,
  priceCall,
  totalMicros,
  type CallMeters,
  type CostLine,
  type MeasuredCallUsage,
} from '@switchboard/billing';
import { Injectable } from '@nestjs/common';
import { Prisma } from '../generated/prisma/client';
import { WebhookOutbox } from '../webhooks/webhook-outbox';
import { announceBudgetThresholds } from './budgets';
import { costLinesData, toCostLedgerLineRecord } from './cost-lines';
import { catalogInForce, toPriceCatalogRecord, type PriceCatalogRecord } from './price-catalogs';

interface BillableCall {
  id: string;
  organization_id: string | null;
  agent_id: string | null;
  engine: string | null;
  direction: 'inbound' | 'outbound' | 'web';
  started_at: Date;
  answered_at: Date | null;
  stream_started_at: Date | null;
  ended_at: Date | null;
  billed_minutes: number | null;
}

/**
 * Writes a call's cost ledger, always inside the caller's transaction (the one that gives the call its
 * final state), with the call row already locked by that caller:
 *  - charge(): at the call's end, prices the meters with the catalog in force when the call started
 *    and writes one 'charge' line per component, plus call_costs (meters + total). Once per call.
 *  - correct(): late data (Twilio's billed duration) re-prices the call from its stored meters and
 *    the SAME catalog version, and appends 'correction' lines for the differences. Nothing is edited.
 * Each emits call.cost (and usage.threshold when the month's spend crosses a budget threshold).
 * Returns the webhook deliveries written, for WebhookOutbox.committed().
 */
@Injectable()
export class CostLedger {
  constructor(private readonly outbox: WebhookOutbox) {}

  async charge(tx: Prisma.TransactionClient, callId: string, usage: MeasuredCallUsage): Promise<number> {
    // Already priced without its media (Twilio's final callback, or an API hang-up, came first): what
    // the media path measured arrives as a correction.
    if (await tx.callCost.findUnique({ where: { callId }, select: { callId: true } })) return this.correct(tx, callId, 'late_usage', usage);
    const call = await readBillableCall(tx, callId);
    if (!call?.organization_id) return 0; // nobody to bill: a call to a number no organization owns
    const catalog = await catalogInForce(tx, call.organization_id, call.started_at);
    const meters: CallMeters = {
      ...usage,
      direction: call.direction,
      engine: call.engine ?? 'unknown',
      measuredConnectedSeconds: measuredConnectedSeconds(call),
      twilioBilledMinutes: call.billed_minutes,
      analysisInputTokens: 0,
      analysisOutputTokens: 0,
    };
    const lines = priceCall(meters, catalog.prices);
    const total = totalMicros(lines);
    await tx.callCost.create({
      data: {
        callId,
        organizationId: call.organization_id,
        agentId: call.agent_id,
        callStartedAt: call.started_at,
        catalogId: catalog.id,
        currency: catalog.currency,
        meters: meters as unknown as Prisma.InputJsonValue,
        totalMicros: BigInt(total),
      },
    });
    return this.append(tx, call, catalog, 'charge', null, lines, total);
  }

  /**
   * Re-prices a priced call after late data changed its meters (Twilio's billed minutes, read from the
   * call row; or `usage` measured by the media path); a no-op when unpriced or nothing changed.
   */
  async correct(tx: Prisma.TransactionClient, callId: string, reason: string, usage?: MeasuredCallUsage): Promise<number> {
    return this.reprice(tx, callId, reason, (meters, call) => ({ ...meters, ...usage, twilioBilledMinutes: call.billed_minutes }));
  }

  /**
   * A post-call analysis ran (again): its tokens are added to the call's meters and charged as
   * 'analysis' correction lines at the catalog's LLM prices. A no-op for a call not priced yet.
   */
  async chargeAnalysis(tx: Prisma.TransactionClient, callId: string, tokens: { inputTokens: number; outputTokens: number }): Promise<number> {
    return this.reprice(tx, callId, 'analysis', (meters) => ({
      ...meters,
      analysisInputTokens: meters.analysisInputTokens + tokens.inputTokens,
      analysisOutputTokens: meters.analysisOutputTokens + tokens.outputTokens,
    }));
  }

  /** Prices the call's changed meters with the SAME catalog version and appends the differences as correction lines. */
  private async reprice(
    tx: Prisma.TransactionClient,
    callId: string,
    reason: string,
    change: (meters: CallMeters, call: BillableCall) => CallMeters,
  ): Promise<number> {
    const cost = await tx.callCost.findUnique({ where: { callId }, include: { catalog: true } });
    const call = cost ? await readBillableCall(tx, callId) : null;
    if (!cost || !call?.organization_id) return 0;
    const meters = change(callMetersSchema.parse(cost.meters), call);
    const catalog = toPriceCatalogRecord(cost.catalog);
    const stored = await tx.costLedgerLine.findMany({ where: { callId }, orderBy: { id: 'asc' } });
    const corrections = correctionLines(stored.map(toCostLedgerLineRecord), priceCall(meters, catalog.prices));
    const newTotal = Number(cost.totalMicros) + totalMicros(corrections);
    await tx.callCost.update({
      where: { callId },
      data: {
        meters: meters as unknown as Prisma.InputJsonValue,
        ...(corrections.length > 0 ? { totalMicros: BigInt(newTotal), correctedAt: new Date() } : {}),
      },
    });
    if (corrections.length === 0) return 0;
    return this.append(tx, call, catalog, 'correction', reason, corrections, newTotal);
  }

  /** Appends the lines, then announces them: call.cost, and usage.threshold if the month's spend crossed one. */
  private async append(
    tx: Prisma.TransactionClient,
    call: BillableCall,
    catalog: PriceCatalogRecord,
    kind: 'charge' | 'correction',
    reason: string | null,
    lines: readonly CostLine[],
    callTotalMicros: number,
  ): Promise<number> {
    // A call with nothing measured (never answered) has no lines; it is still announced, at 0.
    if (lines.length > 0) {
      await tx.costLedgerLine.createMany({
        data: lines.map((line) => ({
          callId: call.id,
          organizationId: call.organization_id!,
          agentId: call.agent_id,
          callStartedAt: call.started_at,
          catalogId: catalog.id,
          currency: catalog.currency,
          kind,
          reason,
          component: line.component,
          quantity: BigInt(line.quantity),
          unit: line.unit,
          unitPriceMicros: BigInt(line.unitPriceMicros),
          unitSize: BigInt(line.unitSize),
          pricePer: line.pricePer,
          amountMicros: BigInt(line.amountMicros),
        })),
      });
    }
    return (
      (await this.emitCost(tx, call, catalog, kind, lines, callTotalMicros)) +
      (await announceBudgetThresholds(tx, this.outbox, call.organization_id!, catalog.currency, call.started_at))
    );
  }

  private emitCost(
    tx: Prisma.TransactionClient,
    call: BillableCall,
    catalog: PriceCatalogRecord,
    kind: 'charge' | 'correction',
    lines: readonly CostLine[],
    callTotalMicros: number,
  ): Promise<number> {
    return this.outbox.enqueue(tx, [
      {
        organizationId: call.organization_id!,
        type: 'call.cost',
        callId: call.id,
        data: {
          callId: call.id,
          agentId: call.agent_id,
          kind,
          currency: catalog.currency,
          catalog: { id: catalog.id, version: catalog.version, organizationId: catalog.organizationId },
          lines: costLinesData(lines),
          totalMicros: callTotalMicros,
          total: formatMicros(callTotalMicros),
        },
      },
    ]);
  }
}

/**
 * Seconds the line was connected as Switchboard saw it: an inbound call is answered when our TwiML
 * is (its start); an outbound one when the callee picked up (answered_at, else the stream's start).
 */
function measuredConnectedSeconds(call: BillableCall): number {
  const answeredAt = call.direction === 'inbound' ? call.started_at : (call.answered_at ?? call.stream_started_at);
  if (!answeredAt || !call.ended_at) return 0;
  return Math.max(0, Math.ceil((call.ended_at.getTime() - answeredAt.getTime()) / 1000));
}

async function readBillableCall(tx: Prisma.TransactionClient, callId: string): Promise<BillableCall | null> {
  const rows = await tx.$queryRaw<BillableCall[]>(Prisma.sql`
    SELECT c.id, c.organization_id, c.agent_id, a.engine, c.direction, c.started_at, c.answered_at,
           c.stream_started_at, c.ended_at, c.billed_minutes
    FROM calls c LEFT JOIN agents a ON a.id = c.agent_id
    WHERE c.id = ${callId}::uuid`);
  return rows[0] ?? null;
}
