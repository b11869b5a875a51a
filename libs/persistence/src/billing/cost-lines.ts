import type { CostLine } from '@switchboard/billing';
import { formatMicros } from '@switchboard/billing';

/** A stored ledger line as the API and webhooks show it (bigints as numbers: amounts fit easily). */
export interface CostLedgerLineRecord extends CostLine {
  id: string;
  kind: 'charge' | 'correction';
  reason: string | null;
  createdAt: Date;
}

export function toCostLedgerLineRecord(row: {
  id: bigint;
  kind: string;
  reason: string | null;
  component: string;
  quantity: bigint;
  unit: string;
  unitPriceMicros: bigint;
  unitSize: bigint;
  pricePer: string;
  amountMicros: bigint;
  createdAt: Date;
}): CostLedgerLineRecord {
  return {
    id: row.id.toString(),
    kind: row.kind as CostLedgerLineRecord['kind'],
    reason: row.reason,
    component: row.component as CostLine['component'],
    quantity: Number(row.quantity),
    unit: row.unit as CostLine['unit'],
    unitPriceMicros: Number(row.unitPriceMicros),
    unitSize: Number(row.unitSize),
    pricePer: row.pricePer,
    amountMicros: Number(row.amountMicros),
    createdAt: row.createdAt,
  };
}

/** The JSON form of lines in webhook payloads (amounts also as exact decimal strings). */
export function costLinesData(lines: readonly CostLine[]) {
  return lines.map((line) => ({ ...line, amount: formatMicros(line.amountMicros) }));
}
