/**
 * Exact money arithmetic. Amounts are integer micro-dollars (µ$, 1 USD = 1_000_000) carried in JS numbers
 * within the safe-integer range; products such as tokens × price-per-million overflow that range long before
 * the result does, so every multiplication and sum goes through BigInt.
 */

export const MICROS_PER_UNIT = 1_000_000;

function requireSafeInteger(name: string, value: number, minimum: number): bigint {
  if (!Number.isSafeInteger(value) || value < minimum) {
    throw new RangeError(`${name} must be a safe integer >= ${minimum}, got ${value}`);
  }
  return BigInt(value);
}

function toSafeNumber(value: bigint, what: string): number {
  const result = Number(value);
  if (!Number.isSafeInteger(result)) throw new RangeError(`${what} ${value} is outside the safe-integer range`);
  return result;
}

/**
 * quantity × unitPriceMicros / unitSize, rounded half up to a whole µ$.
 * Non-negative only: a correction is the difference of two pricings, never a negative quantity priced here.
 */
export function amountMicros(quantity: number, unitPriceMicros: number, unitSize: number): number {
  const q = requireSafeInteger('quantity', quantity, 0);
  const price = requireSafeInteger('unitPriceMicros', unitPriceMicros, 0);
  const size = requireSafeInteger('unitSize', unitSize, 1);
  // floor((2·q·price + size) / (2·size)) = floor(q·price/size + 1/2): half up, without leaving integers.
  return toSafeNumber((2n * q * price + size) / (2n * size), 'amount');
}

/** Number of started units: ceil(quantity / unitSize), e.g. 61 s in 60 s units = 2. */
export function startedUnits(quantity: number, unitSize: number): number {
  const q = requireSafeInteger('quantity', quantity, 0);
  const size = requireSafeInteger('unitSize', unitSize, 1);
  return toSafeNumber((q + size - 1n) / size, 'started units');
}

/** Exact sum of integers (amounts or quantities, negative allowed); throws if it leaves the safe range. */
export function sumIntegers(values: Iterable<number>): number {
  let sum = 0n;
  for (const value of values) sum += requireSafeInteger('value', value, Number.MIN_SAFE_INTEGER);
  return toSafeNumber(sum, 'sum');
}

/** µ$ as an exact decimal with 6 places: 1_234_567 -> "1.234567", -5 -> "-0.000005". */
export function formatMicros(micros: number): string {
  const value = requireSafeInteger('micros', micros, Number.MIN_SAFE_INTEGER);
  const magnitude = value < 0n ? -value : value;
  const perUnit = BigInt(MICROS_PER_UNIT);
  const fraction = (magnitude % perUnit).toString().padStart(6, '0');
  return `${value < 0n ? '-' : ''}${magnitude / perUnit}.${fraction}`;
}
