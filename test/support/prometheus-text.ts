/**
 * Reading a `GET /metrics` answer (Prometheus text format) in tests.
 */

/** The value of one series, written exactly as it appears (name and labels), or undefined when absent. */
export function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** The sum of every series of a metric, whatever its labels (e.g. live calls over all directions and engines). */
export function sumOf(text: string, metric: string): number {
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${metric}{`) || line.startsWith(`${metric} `))
    .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
}
