import { Prisma } from '../generated/prisma/client';

export const USAGE_GROUPINGS = ['agent', 'day', 'component'] as const;
export type UsageGrouping = (typeof USAGE_GROUPINGS)[number];

export interface UsageQuery {
  organizationId: string;
  /** Calls that started in [from, to). */
  from: Date;
  to: Date;
  groupBy: UsageGrouping;
}

/** One row of the report: a group's spend (net of corrections) in one currency. */
export interface UsageRow {
  /** Agent id (null: calls of a deleted agent), day (YYYY-MM-DD, UTC) or component name. */
  group: string | null;
  /** groupBy=agent: the agent's name. */
  label: string | null;
  currency: string;
  calls: number;
  amountMicros: number;
  /** groupBy=component: the quantity, in `unit`. */
  quantity: number | null;
  unit: string | null;
}

export interface UsageReport {
  from: Date;
  to: Date;
  groupBy: UsageGrouping;
  rows: UsageRow[];
  /** Per currency (an organization that changed catalog currency has one entry per currency). */
  totals: Array<{ currency: string; calls: number; amountMicros: number }>;
}

interface RawRow {
  group: string | null;
  label: string | null;
  currency: string;
  calls: bigint;
  amount: bigint;
  quantity: bigint | null;
  unit: string | null;
}

/**
 * Spend of the organization's calls that started in the window, grouped. A call counts where it
 * started (its day, its month), including corrections that came later, so a report never moves a
 * call between days and a re-run for a closed month gives the same numbers unless Twilio corrected it.
 */
export async function usageReport(db: Pick<Prisma.TransactionClient, '$queryRaw'>, query: UsageQuery): Promise<UsageReport> {
  const window = (table: string) => Prisma.sql`${Prisma.raw(table)}.organization_id = ${query.organizationId}::uuid
    AND ${Prisma.raw(table)}.call_started_at >= ${query.from.toISOString()}::timestamptz
    AND ${Prisma.raw(table)}.call_started_at < ${query.to.toISOString()}::timestamptz`;
  const rows = await db.$queryRaw<RawRow[]>(rowsSql(query.groupBy, window));
  const totals = await db.$queryRaw<Array<{ currency: string; calls: bigint; amount: bigint }>>(Prisma.sql`
    SELECT currency, count(*) AS calls, sum(total_micros)::bigint AS amount FROM call_costs WHERE ${window('call_costs')}
    GROUP BY currency ORDER BY currency`);
  return {
    from: query.from,
    to: query.to,
    groupBy: query.groupBy,
    rows: rows.map((row) => ({
      group: row.group,
      label: row.label,
      currency: row.currency,
      calls: Number(row.calls),
      amountMicros: Number(row.amount),
      quantity: row.quantity === null ? null : Number(row.quantity),
      unit: row.unit,
    })),
    totals: totals.map((row) => ({ currency: row.currency, calls: Number(row.calls), amountMicros: Number(row.amount) })),
  };
}

function rowsSql(groupBy: UsageGrouping, window: (table: string) => Prisma.Sql): Prisma.Sql {
  switch (groupBy) {
    case 'agent':
      return Prisma.sql`
        SELECT cc.agent_id::text AS "group", a.name AS label, cc.currency, count(*) AS calls, sum(cc.total_micros)::bigint AS amount,
               NULL::bigint AS quantity, NULL::text AS unit
        FROM call_costs cc LEFT JOIN agents a ON a.id = cc.agent_id
        WHERE ${window('cc')}
        GROUP BY cc.agent_id, a.name, cc.currency ORDER BY amount DESC, "group"`;
    case 'day':
      return Prisma.sql`
        SELECT to_char(call_started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS "group", NULL::text AS label, currency,
               count(*) AS calls, sum(total_micros)::bigint AS amount, NULL::bigint AS quantity, NULL::text AS unit
        FROM call_costs WHERE ${window('call_costs')}
        GROUP BY 1, currency ORDER BY 1, currency`;
    case 'component':
      return Prisma.sql`
        SELECT component AS "group", NULL::text AS label, currency, count(DISTINCT call_id) AS calls,
               sum(amount_micros)::bigint AS amount, sum(quantity)::bigint AS quantity, unit
        FROM cost_ledger_lines WHERE ${window('cost_ledger_lines')}
        GROUP BY component, unit, currency ORDER BY amount DESC, component`;
  }
}
