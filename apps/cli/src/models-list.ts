import type { ModelStatus } from '@switchboard/inference';
import { formatBytes } from './models-progress';

function stateText(status: ModelStatus): string {
  switch (status.state) {
    case 'builtin':
      return 'built-in';
    case 'installed':
      return 'installed';
    case 'corrupt':
      return 'CORRUPT';
    case 'missing':
      return status.partialBytes ? `not pulled (${formatBytes(status.partialBytes)} partial)` : 'not pulled';
  }
}

/** `npm run models -- list`: one row per model, then the problems worth a line of their own. */
export function formatModelTable(statuses: readonly ModelStatus[]): string[] {
  const rows = statuses.map((status) => [
    status.name,
    status.task,
    stateText(status),
    status.sizeBytes === undefined ? '' : formatBytes(status.sizeBytes),
    status.entry?.licence.spdx ?? (status.kind === 'local' ? '(not in catalog)' : ''),
    status.kind === 'builtin' ? 'npm package' : status.optional ? 'optional' : 'required',
  ]);
  const header = ['MODEL', 'TASK', 'STATE', 'SIZE', 'LICENCE', ''];
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)));
  const format = (row: readonly string[]): string =>
    row
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join('  ')
      .trimEnd();
  const lines = [format(header), ...rows.map(format)];
  for (const status of statuses) {
    if (status.problem) lines.push(`${status.name}: ${status.problem}`);
  }
  return lines;
}
