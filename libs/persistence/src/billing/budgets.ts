import { formatMicros } from '@switchboard/billing';
import { Prisma } from '../generated/prisma/client';
import type { WebhookOutbox } from '../webhooks/webhook-outbox';
import { catalogInForce } from './price-catalogs';

/** Percentages of the monthly budget announced by a usage.threshold webhook (each once per month). */
export const BUDGET_THRESHOLDS = [80, 100] as const;

/** The reason stored on a call refused because its organization spent its budget (hard limit). */
export const BUDGET_EXCEEDED_REASON = 'budget_exceeded';

export interface MonthSpend {
  /** First instant of the calendar month (UTC). */
  monthStart: Date;
  spentMicros: number;
}

export interface BudgetStatus extends MonthSpend {
  budgetMicros: number | null;
  hardLimit: boolean;
}

export function monthStartOf(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
}

function nextMonthStart(monthStart: Date): Date {
  return new Date(Date.UTC(monthStart.getUTCFullYear(), monthStart.getUTCMonth() + 1, 1));
}

/** The organization's spend on calls that started in `at`'s month, in `currency` (net of corrections). */
export async function monthSpend(db: Pick<Prisma.TransactionClient, '$queryRaw'>, organizationId: string, at: Date, currency?: string): Promise<MonthSpend> {
  const monthStart = monthStartOf(at);
  const rows = await db.$queryRaw<Array<{ spent: bigint | null }>>(Prisma.sql`
    SELECT sum(total_micros)::bigint AS spent FROM call_costs
    WHERE organization_id = ${organizationId}::uuid
      AND call_started_at >= ${monthStart.toISOString()}::timestamptz
      AND call_started_at < ${nextMonthStart(monthStart).toISOString()}::timestamptz
      ${currency === undefined ? Prisma.empty : Prisma.sql`AND currency = ${currency}`}`);
  return { monthStart, spentMicros: Number(rows[0]?.spent ?? 0n) };
}

/**
 * After a ledger write: announces each budget threshold the month's spend has now reached, once per
 * organization and month (budget_alerts' key makes a second announcement impossible). The
 * organization row is locked first (only when it has a budget), so two calls ending together cannot both miss a crossing that
 * their sum makes. Returns the webhook deliveries written.
 */
export async function announceBudgetThresholds(
  tx: Prisma.TransactionClient,
  outbox: WebhookOutbox,
  organizationId: string,
  currency: string,
  callStartedAt: Date,
): Promise<number> {
  // FOR NO KEY UPDATE, not FOR UPDATE: the ledger rows this transaction inserted hold a key-share lock
  // on the organization (their foreign key), which FOR UPDATE would conflict with across two calls.
  const rows = await tx.$queryRaw<Array<{ budget: bigint | null; hard_limit: boolean }>>(Prisma.sql`
    SELECT monthly_budget_micros AS budget, budget_hard_limit AS hard_limit FROM organizations
    WHERE id = ${organizationId}::uuid AND monthly_budget_micros IS NOT NULL FOR NO KEY UPDATE`);
  const budget = rows[0]?.budget;
  if (budget === null || budget === undefined || budget <= 0n) return 0;
  const { monthStart, spentMicros } = await monthSpend(tx, organizationId, callStartedAt, currency);
  let deliveries = 0;
  for (const threshold of BUDGET_THRESHOLDS) {
    if (BigInt(spentMicros) * 100n < budget * BigInt(threshold)) continue;
    const inserted = await tx.$executeRaw(Prisma.sql`
      INSERT INTO budget_alerts (organization_id, month, threshold, spent_micros, budget_micros)
      VALUES (${organizationId}::uuid, ${monthStart.toISOString().slice(0, 10)}::date, ${threshold}, ${spentMicros}, ${budget})
      ON CONFLICT DO NOTHING`);
    if (inserted === 0) continue;
    deliveries += await outbox.enqueue(tx, [
      {
        organizationId,
        type: 'usage.threshold',
        data: {
          month: monthStart.toISOString().slice(0, 7),
          thresholdPercent: threshold,
          currency,
          budgetMicros: Number(budget),
          budget: formatMicros(Number(budget)),
          spentMicros,
          spent: formatMicros(spentMicros),
          hardLimit: rows[0]!.hard_limit,
          newCallsRefused: rows[0]!.hard_limit && threshold >= 100,
        },
      },
    ]);
  }
  return deliveries;
}

/** The organization's budget and this month's spend (in the currency its catalog uses now). */
export async function readBudgetStatus(
  db: Pick<Prisma.TransactionClient, '$queryRaw'>,
  organizationId: string,
  currency: string,
  at: Date,
): Promise<BudgetStatus | null> {
  const rows = await db.$queryRaw<Array<{ budget: bigint | null; hard_limit: boolean }>>(Prisma.sql`
    SELECT monthly_budget_micros AS budget, budget_hard_limit AS hard_limit FROM organizations WHERE id = ${organizationId}::uuid`);
  const row = rows[0];
  if (!row) return null;
  const spend = await monthSpend(db, organizationId, at, currency);
  return { ...spend, budgetMicros: row.budget === null ? null : Number(row.budget), hardLimit: row.hard_limit };
}

/**
 * The budget as admission and GET /v1/organization see it: this month's spend in the currency of
 * the catalog in force at `at` (null when the organization does not exist).
 */
export async function budgetStatusAt(
  db: Pick<Prisma.TransactionClient, '$queryRaw' | '$executeRaw' | 'priceCatalog'>,
  organizationId: string,
  at: Date,
): Promise<(BudgetStatus & { currency: string }) | null> {
  const { currency } = await catalogInForce(db, organizationId, at);
  const status = await readBudgetStatus(db, organizationId, currency, at);
  return status && { ...status, currency };
}

/** Whether the organization has a budget and refuses calls over it (hard limit). */
export async function hasHardBudget(db: Pick<Prisma.TransactionClient, '$queryRaw'>, organizationId: string): Promise<boolean> {
  const rows = await db.$queryRaw<Array<{ hard: boolean }>>(Prisma.sql`
    SELECT (budget_hard_limit AND monthly_budget_micros IS NOT NULL) AS hard FROM organizations WHERE id = ${organizationId}::uuid`);
  return rows[0]?.hard === true;
}

/** A hard-limited organization that has spent its month's budget takes no new calls. */
export function isBudgetExhausted(status: BudgetStatus | null): boolean {
  return status !== null && status.hardLimit && status.budgetMicros !== null && status.spentMicros >= status.budgetMicros;
}
