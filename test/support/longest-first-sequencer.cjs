// @ts-check
/**
 * Starts the longest spec files first, so the two Jest workers finish together instead of one
 * waiting on a 2-minute built-server spec that happened to start last.
 *
 * Jest already orders by the durations it cached on an earlier run, but CI runs on a fresh clone
 * whose cache is empty, and then Jest orders by file size: a short file can be one of the longest
 * runs (the walkthrough spec) and start near the end. Where Jest has no cached duration, this takes
 * the one recorded in test/support/spec-durations.json (seconds per file from one full run on the
 * 2-core machine; `npm run test:durations` rewrites it). A file missing from the record (a new spec)
 * counts as the record's median: a stale record only costs ordering, never a test.
 *
 * Plain CommonJS: Jest loads a sequencer with Node's require, without the spec transform.
 */
const { readFileSync } = require('node:fs');
const { join, relative } = require('node:path');
const TestSequencer = require('@jest/test-sequencer').default;

const RECORD = join(__dirname, 'spec-durations.json');
const ROOT = join(__dirname, '..', '..');

/** @returns {Map<string, number>} seconds by path relative to the project root */
function recordedSeconds() {
  try {
    return new Map(Object.entries(JSON.parse(readFileSync(RECORD, 'utf8')).seconds));
  } catch {
    return new Map();
  }
}

/** @param {number[]} values */
function median(values) {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

class LongestFirstSequencer extends TestSequencer {
  /** @param {import('@jest/test-result').Test[]} tests */
  sort(tests) {
    const recorded = recordedSeconds();
    const fallback = median([...recorded.values()]);
    const expectedMs = new Map();
    const failed = new Set();
    for (const test of tests) {
      // Jest's own cache: [0 = failed | 1 = passed, duration in ms] from this checkout's last run.
      const [status, cachedMs] = this._getCache(test)[test.path] ?? [];
      if (status === 0) failed.add(test);
      const seconds = recorded.get(relative(ROOT, test.path).split('\\').join('/'));
      expectedMs.set(test, cachedMs ?? (seconds ?? fallback) * 1000);
    }
    // Failed files first, as Jest does, so a fix is confirmed early; then the longest first.
    return [...tests].sort((a, b) => {
      if (failed.has(a) !== failed.has(b)) return failed.has(a) ? -1 : 1;
      return expectedMs.get(b) - expectedMs.get(a);
    });
  }
}

module.exports = LongestFirstSequencer;
