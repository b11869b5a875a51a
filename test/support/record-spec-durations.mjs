#!/usr/bin/env node
/**
 * Rewrites test/support/spec-durations.json (what longest-first-sequencer.cjs orders a fresh
 * clone's run by) from a Jest JSON report: `npm run test:durations` runs the suite and records it.
 * Usage: node test/support/record-spec-durations.mjs JEST_JSON_REPORT
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const reportPath = process.argv[2];
if (!reportPath) {
  console.error('usage: node test/support/record-spec-durations.mjs JEST_JSON_REPORT');
  process.exit(2);
}
const report = JSON.parse(readFileSync(reportPath, 'utf8'));
const seconds = {};
for (const file of report.testResults) {
  seconds[relative(root, file.name).split('\\').join('/')] = Math.round((file.endTime - file.startTime) / 100) / 10;
}
const sorted = Object.fromEntries(Object.entries(seconds).sort(([a], [b]) => (a < b ? -1 : 1)));
const note = 'Seconds per spec file from one full run on the 2-core machine; only the order of a fresh run depends on it.';
writeFileSync(join(here, 'spec-durations.json'), `${JSON.stringify({ note, seconds: sorted }, null, 2)}\n`);
const total = Object.values(seconds).reduce((sum, value) => sum + value, 0);
console.log(`recorded ${Object.keys(seconds).length} spec files, ${Math.round(total)} s in all`);
