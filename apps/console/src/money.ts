/**
 * Money as the console shows it. The API gives every amount as integer micro-units (and an exact
 * six-decimal string); six decimals are noise to a reader, so totals show cents and prices show up
 * to four decimals. Arithmetic stays on integers: no float ever rounds an amount.
 */

const MICROS_PER_UNIT = 1_000_000;

/** An exact decimal string as the API writes it ("0.017000", "-1.5", "12") as integer micro-units. */
export function microsOf(decimal: string): number {
  const match = /^(-)?(\d+)(?:\.(\d+))?$/.exec(decimal.trim());
  if (!match) return Number.NaN;
  const [, sign, whole = '0', fraction = ''] = match;
  const micros = Number(whole) * MICROS_PER_UNIT + Number(fraction.padEnd(6, '0').slice(0, 6));
  return sign ? -micros : micros;
}

/** Micro-units rounded half away from zero to `decimals` places (0..6), as a decimal string. */
export function formatMicros(micros: number, decimals: number): string {
  const step = 10 ** (6 - decimals);
  const magnitude = Math.round(Math.abs(micros) / step) * step;
  const whole = Math.floor(magnitude / MICROS_PER_UNIT);
  const fraction = String(magnitude % MICROS_PER_UNIT)
    .padStart(6, '0')
    .slice(0, decimals);
  const text = decimals === 0 ? String(whole) : `${whole}.${fraction}`;
  return micros < 0 && magnitude > 0 ? `-${text}` : text;
}

/**
 * A total (a call's cost, a month's spend): two decimals. An amount that is not zero but rounds to
 * 0.00 reads "< 0.01", so a cheap call does not look free.
 */
export function formatTotal(micros: number, currency?: string | null): string {
  const unit = currency ? ` ${currency}` : '';
  if (Number.isNaN(micros)) return `?${unit}`;
  const rounded = formatMicros(micros, 2);
  if (micros !== 0 && /^-?0\.00$/.test(rounded)) return `${micros < 0 ? '> -0.01' : '< 0.01'}${unit}`;
  return `${rounded}${unit}`;
}

/**
 * A price per unit (per minute, per 1M tokens) or a ledger line: two to four decimals, trailing
 * zeros dropped past two. Below a cent, a price that four decimals would change is shown exactly
 * (a per-second price of 0.00015 is not 0.0002).
 */
export function formatPrecise(micros: number): string {
  if (Number.isNaN(micros)) return '?';
  const exact = formatMicros(micros, 6);
  const four = formatMicros(micros, 4);
  const shown = Math.abs(micros) < 10_000 && microsOf(four) !== micros ? exact : four;
  return shown.replace(/(\.\d\d\d*?)0+$/, '$1');
}

/**
 * A ledger line's amount: four decimals; an amount that is not zero but rounds to 0.0000 reads
 * "< 0.0001" (a few tokens cost millionths).
 */
export function formatLineAmount(micros: number): string {
  if (Number.isNaN(micros)) return '?';
  const rounded = formatMicros(micros, 4);
  if (micros !== 0 && /^-?0\.0000$/.test(rounded)) return micros < 0 ? '> -0.0001' : '< 0.0001';
  return rounded;
}
