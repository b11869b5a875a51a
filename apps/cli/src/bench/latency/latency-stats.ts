/**
 * Distributions of per-reply figures and the targets checked against them. Percentiles
 * are nearest-rank, as in the other benches (a p99 of 100 samples is the 99th smallest).
 */
import { mean, percentile } from '../inference-bench-stats';

export interface Distribution {
  count: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  mean: number;
}

export function distribution(values: readonly number[]): Distribution {
  return {
    count: values.length,
    p50: percentile(values, 0.5),
    p95: percentile(values, 0.95),
    p99: percentile(values, 0.99),
    max: values.length === 0 ? Number.NaN : Math.max(...values),
    mean: mean(values),
  };
}

export interface Target {
  name: string;
  value: number;
  target: string;
  pass: boolean;
}

/** A target on a value that must not exceed `limit`; an empty sample (NaN) fails. */
export function atMost(name: string, value: number, limit: number, unit = 'ms'): Target {
  return { name, value, target: `<= ${limit} ${unit}`, pass: Number.isFinite(value) && value <= limit };
}

/** Every expected sample was measured: a run that lost replies or barge-ins cannot pass on the rest. */
export function allMeasured(name: string, measured: number, expected: number): Target {
  return { name, value: measured, target: `= ${expected}`, pass: expected > 0 && measured === expected };
}
