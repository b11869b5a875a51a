import { COST_COMPONENTS, formatMicros, PRICE_FIELDS, priceCatalogPrices, type CostLine } from '@switchboard/billing';
import type { CallCostRecord, CostLedgerLineRecord, PriceCatalogRecord } from '@switchboard/persistence';
import { z } from 'zod';
import { createApiDto, isoDateTime, nullableDateTime, uuid } from '../../openapi/api-schemas';

/*
 * Money leaves the API twice: `...Micros` as an exact integer (millionths of the currency unit) to
 * compute with, and the same amount as a decimal string ("0.017000") to show. Never a float.
 */

const micros = z.number().int().describe('Integer millionths of the currency unit.');
const decimal = z.string().describe('The same amount as an exact decimal string.');

const costLineSchema = z.strictObject({
  component: z.enum(COST_COMPONENTS as unknown as [string, ...string[]]),
  quantity: z.number().int().describe('In `unit`; corrections may be negative.'),
  unit: z.enum(['minute', 'audio_ms', 'character', 'token', 'microsecond']),
  unitPriceMicros: micros.describe('Price per `unitSize` units of `unit`.'),
  unitSize: z.number().int(),
  pricePer: z.string().describe("The price's unit in words: minute, 1M tokens, second ..."),
  amountMicros: micros,
  amount: decimal,
});

const ledgerLineSchema = costLineSchema.extend({
  id: z.string(),
  kind: z.enum(['charge', 'correction']),
  reason: z.string().nullable().describe('Why a correction was made (twilio_billed_duration, late_usage).'),
  createdAt: isoDateTime,
});

const catalogRefSchema = z.strictObject({
  id: uuid,
  version: z.number().int(),
  organizationId: uuid.nullable().describe('Null: the deployment default catalog.'),
  effectiveFrom: isoDateTime,
});

export const callCostSchema = z.strictObject({
  callId: uuid,
  status: z.enum(['priced', 'pending']).describe('pending: the call has not ended yet, nothing is priced.'),
  currency: z.string().nullable(),
  catalog: catalogRefSchema.nullable(),
  totalMicros: micros.nullable(),
  total: decimal.nullable(),
  pricedAt: nullableDateTime,
  correctedAt: nullableDateTime,
  meters: z.record(z.string(), z.union([z.number(), z.string(), z.null()])).nullable().describe('What was measured: the only input of pricing besides the catalog.'),
  lines: z.array(ledgerLineSchema).describe('The ledger, append-only: charges, then any corrections.'),
  repriced: z
    .strictObject({ totalMicros: micros, matchesLedger: z.boolean().describe('Pricing the stored meters again gives the ledger\'s net, component by component.') })
    .nullable(),
  ownPricing: z
    .strictObject({
      catalog: z.strictObject({ id: uuid, version: z.number().int(), effectiveFrom: isoDateTime }),
      currency: z.string(),
      lines: z.array(costLineSchema),
      totalMicros: micros,
      total: decimal,
    })
    .nullable()
    .describe("The same meters at the organization's own prices (POST /v1/price-catalog) in force when the call started: its own report, not what it is billed. Null without own prices."),
});
export class CallCostDto extends createApiDto(callCostSchema) {}

export function lineView(line: CostLine) {
  return {
    component: line.component,
    quantity: line.quantity,
    unit: line.unit,
    unitPriceMicros: line.unitPriceMicros,
    unitSize: line.unitSize,
    pricePer: line.pricePer,
    amountMicros: line.amountMicros,
    amount: formatMicros(line.amountMicros),
  };
}

function ledgerLineView(line: CostLedgerLineRecord) {
  return { id: line.id, kind: line.kind, reason: line.reason, ...lineView(line), createdAt: line.createdAt.toISOString() };
}

export function callCostView(callId: string, cost: CallCostRecord | null): z.infer<typeof callCostSchema> {
  if (!cost) {
    return { callId, status: 'pending', currency: null, catalog: null, totalMicros: null, total: null, pricedAt: null, correctedAt: null, meters: null, lines: [], repriced: null, ownPricing: null };
  }
  return {
    callId,
    status: 'priced',
    currency: cost.currency,
    catalog: { ...cost.catalog, effectiveFrom: cost.catalog.effectiveFrom.toISOString() },
    totalMicros: cost.totalMicros,
    total: formatMicros(cost.totalMicros),
    pricedAt: cost.pricedAt.toISOString(),
    correctedAt: cost.correctedAt?.toISOString() ?? null,
    meters: { ...cost.meters },
    lines: cost.lines.map(ledgerLineView),
    repriced: { totalMicros: cost.repriced.totalMicros, matchesLedger: cost.repriced.matchesLedger },
    ownPricing: cost.ownPricing && {
      catalog: { ...cost.ownPricing.catalog, effectiveFrom: cost.ownPricing.catalog.effectiveFrom.toISOString() },
      currency: cost.ownPricing.currency,
      lines: cost.ownPricing.lines.map(lineView),
      totalMicros: cost.ownPricing.totalMicros,
      total: formatMicros(cost.ownPricing.totalMicros),
    },
  };
}

export const priceCatalogSchema = z.strictObject({
  id: uuid,
  organizationId: uuid.nullable().describe('Null: the deployment default.'),
  setBy: z.enum(['operator', 'organization']).describe("operator: prices calls are billed with; organization: the organization's own, for its reports."),
  version: z.number().int(),
  currency: z.string(),
  effectiveFrom: isoDateTime,
  createdAt: isoDateTime,
  prices: priceCatalogPrices.describe(`Integer millionths of the currency per unit; absent = 0. Fields: ${PRICE_FIELDS.join(', ')}.`),
});
export class PriceCatalogDto extends createApiDto(priceCatalogSchema) {}
export class PriceCatalogListDto extends createApiDto(
  z.strictObject({
    inForce: priceCatalogSchema.describe('The version new calls are billed with now (the operator\'s).'),
    operator: z.array(priceCatalogSchema).describe("Versions the operator set for this organization (billing), newest first."),
    own: z.array(priceCatalogSchema).describe("The organization's own versions (its reports: ownPricing), newest first."),
    defaults: z.array(priceCatalogSchema).describe('The deployment default versions, newest first (billing while the operator set none for the organization).'),
  }),
) {}

export function catalogView(catalog: PriceCatalogRecord): z.infer<typeof priceCatalogSchema> {
  return { ...catalog, effectiveFrom: catalog.effectiveFrom.toISOString(), createdAt: catalog.createdAt.toISOString() };
}
