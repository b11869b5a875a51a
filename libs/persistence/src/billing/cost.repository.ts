import { Injectable, Optional } from '@nestjs/common';
import { callMetersSchema, correctionLines, priceCall, totalMicros, type CallMeters, type CostLine, type PriceCatalogPrices } from '@switchboard/billing';
import { PrismaService } from '../prisma.service';
import { invalidInput } from '../persistence.errors';
import { isUuid } from '../uuid';
import { WebhookOutbox } from '../webhooks/webhook-outbox';
import { announceBudgetThresholds, budgetStatusAt, type BudgetStatus } from './budgets';
import { toCostLedgerLineRecord, type CostLedgerLineRecord } from './cost-lines';
import { catalogInForce, defaultCatalogInForce, organizationCatalogInForce, toPriceCatalogRecord, type CatalogSetter, type PriceCatalogRecord } from './price-catalogs';
import { usageReport, type UsageQuery, type UsageReport } from './usage-report';

/** A priced call: its ledger, and the same pricing re-run from the stored meters as a check. */
export interface CallCostRecord {
  callId: string;
  currency: string;
  catalog: Pick<PriceCatalogRecord, 'id' | 'version' | 'organizationId' | 'effectiveFrom'>;
  meters: CallMeters;
  totalMicros: number;
  pricedAt: Date;
  correctedAt: Date | null;
  lines: CostLedgerLineRecord[];
  /** priceCall(meters, catalog) now: equal to the ledger's net per component unless pricing code changed. */
  repriced: { lines: CostLine[]; totalMicros: number; matchesLedger: boolean };
  /**
   * The same meters at the organization's OWN prices in force when the call started (its report of
   * what the call costs its customers); null when it set none. Never what it is billed.
   */
  ownPricing: { catalog: Pick<PriceCatalogRecord, 'id' | 'version' | 'effectiveFrom'>; currency: string; lines: CostLine[]; totalMicros: number } | null;
}

export interface NewCatalogVersionInput {
  organizationId: string;
  /** 'operator': the prices the organization is billed with; 'organization': its own, for its reports. */
  setBy: CatalogSetter;
  prices: PriceCatalogPrices;
  /** Default: the currency of the catalog in force now. */
  currency?: string;
  /** Default: now. Never in the past: calls already started keep the prices they started with. */
  effectiveFrom?: Date;
}

/** Clock skew tolerated on a client's "now" when it sets effectiveFrom. */
const EFFECTIVE_FROM_SKEW_MS = 60_000;

/** Reads of the cost ledger, the price catalog versions, budgets and the usage report. */
@Injectable()
export class CostRepository {
  private readonly outbox: WebhookOutbox;

  constructor(
    private readonly prisma: PrismaService,
    @Optional() outbox?: WebhookOutbox,
  ) {
    this.outbox = outbox ?? new WebhookOutbox();
  }

  /** Null when the call is not the organization's or not priced yet (still live). */
  async callCost(organizationId: string, callId: string): Promise<CallCostRecord | null> {
    if (!isUuid(organizationId) || !isUuid(callId)) return null;
    const cost = await this.prisma.callCost.findFirst({ where: { callId, organizationId }, include: { catalog: true } });
    if (!cost) return null;
    const rows = await this.prisma.costLedgerLine.findMany({ where: { callId }, orderBy: { id: 'asc' } });
    const lines = rows.map(toCostLedgerLineRecord);
    const meters = callMetersSchema.parse(cost.meters);
    const catalog = toPriceCatalogRecord(cost.catalog);
    const repricedLines = priceCall(meters, catalog.prices);
    const own = await organizationCatalogInForce(this.prisma, organizationId, cost.callStartedAt);
    const ownLines = own ? priceCall(meters, own.prices) : null;
    return {
      callId,
      currency: cost.currency,
      catalog: { id: catalog.id, version: catalog.version, organizationId: catalog.organizationId, effectiveFrom: catalog.effectiveFrom },
      meters,
      totalMicros: Number(cost.totalMicros),
      pricedAt: cost.pricedAt,
      correctedAt: cost.correctedAt,
      lines,
      repriced: { lines: repricedLines, totalMicros: totalMicros(repricedLines), matchesLedger: correctionLines(lines, repricedLines).length === 0 },
      ownPricing:
        own && ownLines
          ? { catalog: { id: own.id, version: own.version, effectiveFrom: own.effectiveFrom }, currency: own.currency, lines: ownLines, totalMicros: totalMicros(ownLines) }
          : null,
    };
  }

  /**
   * The catalog calls are billed with now (`inForce`), the versions the operator set for the
   * organization, its own versions (its reports), and the deployment default's, newest first.
   */
  async catalogs(
    organizationId: string,
    at = new Date(),
  ): Promise<{ inForce: PriceCatalogRecord; operator: PriceCatalogRecord[]; own: PriceCatalogRecord[]; defaults: PriceCatalogRecord[] }> {
    const inForce = await catalogInForce(this.prisma, organizationId, at);
    const [operator, own, defaults] = await Promise.all([
      this.prisma.priceCatalog.findMany({ where: { organizationId, setBy: 'operator' }, orderBy: { version: 'desc' } }),
      this.prisma.priceCatalog.findMany({ where: { organizationId, setBy: 'organization' }, orderBy: { version: 'desc' } }),
      this.prisma.priceCatalog.findMany({ where: { organizationId: null }, orderBy: { version: 'desc' } }),
    ]);
    return { inForce, operator: operator.map(toPriceCatalogRecord), own: own.map(toPriceCatalogRecord), defaults: defaults.map(toPriceCatalogRecord) };
  }

  /**
   * Adds a version of the organization's catalog, the operator's (billing) or its own (reports). Versions
   * are immutable and numbered 1, 2, 3 ... per setter under a row lock on the organization; the currency
   * never changes between one setter's versions (a month's spend and budget are then always in one currency).
   */
  async createCatalogVersion(input: NewCatalogVersionInput, now = new Date()): Promise<PriceCatalogRecord> {
    if (!isUuid(input.organizationId)) throw invalidInput('Invalid organization id');
    const effectiveFrom = input.effectiveFrom ?? now;
    if (effectiveFrom.getTime() < now.getTime() - EFFECTIVE_FROM_SKEW_MS) {
      throw invalidInput('effectiveFrom must not be in the past: calls that already started keep the prices they started with');
    }
    return this.prisma.$transaction(async (tx) => {
      await tx.$queryRaw`SELECT id FROM organizations WHERE id = ${input.organizationId}::uuid FOR UPDATE`;
      const latest = await tx.priceCatalog.findFirst({ where: { organizationId: input.organizationId, setBy: input.setBy }, orderBy: { version: 'desc' } });
      const currency = latest?.currency ?? (await defaultCatalogInForce(tx, now)).currency;
      if (input.currency !== undefined && input.currency !== currency) {
        throw invalidInput(`currency must stay ${currency}: every version of an organization's catalog uses one currency`);
      }
      const created = await tx.priceCatalog.create({
        data: { organizationId: input.organizationId, setBy: input.setBy, version: (latest?.version ?? 0) + 1, currency, prices: input.prices, effectiveFrom },
      });
      return toPriceCatalogRecord(created);
    });
  }

  async usage(query: UsageQuery): Promise<UsageReport> {
    if (!isUuid(query.organizationId)) throw invalidInput('Invalid organization id');
    return usageReport(this.prisma, query);
  }

  /** This month's spend against the budget, in the currency of the catalog in force now. */
  async budgetStatus(organizationId: string, at = new Date()): Promise<(BudgetStatus & { currency: string }) | null> {
    if (!isUuid(organizationId)) return null;
    return budgetStatusAt(this.prisma, organizationId, at);
  }

  /**
   * Sets (or clears, with null) the monthly budget; false when the organization does not exist. A budget
   * set at or below what the month already spent announces its thresholds at once (usage.threshold),
   * rather than at the next call's end.
   */
  async setBudget(organizationId: string, budget: { monthlyBudgetMicros?: number | null; hardLimit?: boolean }, now = new Date()): Promise<boolean> {
    if (!isUuid(organizationId)) return false;
    const { found, deliveries } = await this.prisma.$transaction(async (tx) => {
      const { count } = await tx.organization.updateMany({
        where: { id: organizationId },
        data: {
          ...(budget.monthlyBudgetMicros !== undefined ? { monthlyBudgetMicros: budget.monthlyBudgetMicros === null ? null : BigInt(budget.monthlyBudgetMicros) } : {}),
          ...(budget.hardLimit !== undefined ? { budgetHardLimit: budget.hardLimit } : {}),
        },
      });
      if (count !== 1) return { found: false, deliveries: 0 };
      const { currency } = await catalogInForce(tx, organizationId, now);
      return { found: true, deliveries: await announceBudgetThresholds(tx, this.outbox, organizationId, currency, now) };
    });
    this.outbox.committed(deliveries);
    return found;
  }
}
