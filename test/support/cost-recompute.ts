/*
 * The cost ledger's arithmetic written again, independently of @switchboard/billing (which it must
 * not import: a test that re-used the product's pricing would agree with any bug in it). Integers
 * only; products go through BigInt so that tokens x price-per-million cannot lose precision.
 */

/** One ledger line as the test expects it, in the API's field names. */
export interface ExpectedCostLine {
  component: string;
  quantity: number;
  unit: string;
  unitPriceMicros: number;
  unitSize: number;
  pricePer: string;
  amountMicros: number;
}

/** How a component is priced: its meter's unit and how many of those one price covers. */
export interface PriceUnit {
  unit: string;
  unitSize: number;
  pricePer: string;
}

export const PER_MINUTE: PriceUnit = { unit: 'minute', unitSize: 1, pricePer: 'minute' };
export const PER_AUDIO_MINUTE: PriceUnit = { unit: 'audio_ms', unitSize: 60_000, pricePer: 'minute' };
export const PER_MILLION_CHARACTERS: PriceUnit = { unit: 'character', unitSize: 1_000_000, pricePer: '1M characters' };
export const PER_MILLION_TOKENS: PriceUnit = { unit: 'token', unitSize: 1_000_000, pricePer: '1M tokens' };
export const PER_SECOND_OF_MICROSECONDS: PriceUnit = { unit: 'microsecond', unitSize: 1_000_000, pricePer: 'second' };

/** numerator / denominator rounded half up (both non-negative integers). */
export function divideHalfUp(numerator: bigint, denominator: bigint): bigint {
  return (2n * numerator + denominator) / (2n * denominator);
}

/** quantity x unitPriceMicros / unitSize in whole µ$, half up. */
export function amountOf(quantity: number, unitPriceMicros: number, unitSize: number): number {
  return Number(divideHalfUp(BigInt(quantity) * BigInt(unitPriceMicros), BigInt(unitSize)));
}

/** Started units: ceil(quantity / unitSize), e.g. 61 s in 60 s units = 2. */
export function startedUnits(quantity: number, unitSize: number): number {
  return Number((BigInt(quantity) + BigInt(unitSize) - 1n) / BigInt(unitSize));
}

/** Length of `samples` samples at `sampleRate` Hz in whole ms, half up. */
export function millisecondsOfSamples(samples: number, sampleRate: number): number {
  return Number(divideHalfUp(BigInt(samples) * 1000n, BigInt(sampleRate)));
}

export function expectedLine(component: string, quantity: number, unitPriceMicros: number, priceUnit: PriceUnit): ExpectedCostLine {
  return { component, quantity, ...priceUnit, unitPriceMicros, amountMicros: amountOf(quantity, unitPriceMicros, priceUnit.unitSize) };
}

export function sumOf(values: readonly number[]): number {
  return Number(values.reduce((sum, value) => sum + BigInt(value), 0n));
}

/** µ$ as the API's exact decimal string with 6 places: 1_234_567 -> "1.234567", -5 -> "-0.000005". */
export function decimalOf(micros: number): string {
  const magnitude = BigInt(Math.abs(micros));
  const sign = micros < 0 ? '-' : '';
  return `${sign}${magnitude / 1_000_000n}.${(magnitude % 1_000_000n).toString().padStart(6, '0')}`;
}

/** The fields of an API ledger line that pricing decides (ids, kinds and timestamps left out). */
export function pricedFields(line: ExpectedCostLine): ExpectedCostLine {
  const { component, quantity, unit, unitPriceMicros, unitSize, pricePer, amountMicros } = line;
  return { component, quantity, unit, unitPriceMicros, unitSize, pricePer, amountMicros };
}
