import { formatMicros } from '@switchboard/billing';
import { USAGE_GROUPINGS, type UsageReport } from '@switchboard/persistence';
import { stringify } from 'csv-stringify/sync';
import { z } from 'zod';
import { isoTimestamp, isoTimestampText } from '../../common/query-timestamps';
import { createApiDto, isoDateTime } from '../../openapi/api-schemas';

/** The longest window one report may cover (a year and a bit: enough for annual reconciliation). */
const MAX_WINDOW_MS = 370 * 24 * 60 * 60 * 1000;

export const usageQuery = z
  .object({
    /** Calls that started at or after `from` (default: the start of this month, UTC). */
    from: isoTimestamp.optional(),
    /** ...and before `to` (default: now). */
    to: isoTimestamp.optional(),
    groupBy: z.enum(USAGE_GROUPINGS).default('component'),
    /** csv: text/csv instead of JSON (so does `Accept: text/csv`). */
    format: z.enum(['json', 'csv']).optional(),
  })
  .transform((query) => {
    const now = new Date();
    const to = query.to ?? now;
    const from = query.from ?? new Date(Date.UTC(to.getUTCFullYear(), to.getUTCMonth(), 1));
    return { ...query, from, to };
  })
  .refine((query) => query.from.getTime() < query.to.getTime(), { path: ['to'], message: 'to must be after from' })
  .refine((query) => query.to.getTime() - query.from.getTime() <= MAX_WINDOW_MS, { path: ['from'], message: 'the window must not exceed 370 days' });
export class UsageQueryDto extends createApiDto(
  z.object({
    from: isoTimestampText.optional().describe('Calls that started at or after this time; default: the start of this month (UTC).'),
    to: isoTimestampText.optional().describe('...and before this time; default: now.'),
    groupBy: z.enum(USAGE_GROUPINGS).optional().describe('agent | day (UTC) | component; default component.'),
    format: z.enum(['json', 'csv']).optional().describe('csv answers text/csv (as does `Accept: text/csv`).'),
  }),
) {}

const usageRowSchema = z.strictObject({
  group: z.string().nullable().describe('Agent id (null: a deleted agent), day YYYY-MM-DD, or component.'),
  label: z.string().nullable().describe("groupBy=agent: the agent's name."),
  currency: z.string(),
  calls: z.number().int(),
  quantity: z.number().int().nullable().describe('groupBy=component: total quantity in `unit`.'),
  unit: z.string().nullable(),
  amountMicros: z.number().int(),
  amount: z.string(),
});
export const usageReportSchema = z.strictObject({
  from: isoDateTime,
  to: isoDateTime,
  groupBy: z.enum(USAGE_GROUPINGS),
  data: z.array(usageRowSchema),
  totals: z.array(z.strictObject({ currency: z.string(), calls: z.number().int(), amountMicros: z.number().int(), amount: z.string() })),
});
export class UsageReportDto extends createApiDto(usageReportSchema) {}

export function usageReportView(report: UsageReport): z.infer<typeof usageReportSchema> {
  return {
    from: report.from.toISOString(),
    to: report.to.toISOString(),
    groupBy: report.groupBy,
    data: report.rows.map((row) => ({ ...row, amount: formatMicros(row.amountMicros) })),
    totals: report.totals.map((total) => ({ ...total, amount: formatMicros(total.amountMicros) })),
  };
}

export const USAGE_CSV_COLUMNS = ['group', 'label', 'currency', 'calls', 'quantity', 'unit', 'amount_micros', 'amount'] as const;

/**
 * RFC 4180 CSV, one row per group. Agent names are the tenant's own text: quoting is the library's,
 * and cells that a spreadsheet would run as a formula (=, +, -, @) are escaped.
 */
export function usageReportCsv(report: UsageReport): string {
  const rows = report.rows.map((row) => [row.group, row.label, row.currency, row.calls, row.quantity, row.unit, row.amountMicros, formatMicros(row.amountMicros)]);
  return stringify(rows, { header: true, columns: [...USAGE_CSV_COLUMNS], escape_formulas: true, cast: { number: String } });
}
