/**
 * Starts an inference worker thread from wherever this module runs: compiled JavaScript (dist)
 * starts `inference-worker.js` directly; TypeScript sources (ts-node, Jest) start a small bootstrap
 * that registers ts-node in the new thread first, because a worker does not inherit the parent's
 * require hooks (Jest's transformer or ts-node's).
 */
import { existsSync } from 'node:fs';
import { dirname, extname, join } from 'node:path';
import { Worker } from 'node:worker_threads';

const WORKER_BASENAME = 'inference-worker';

export function launchInferenceWorker(): Worker {
  return launchWorkerBeside(__filename, WORKER_BASENAME);
}

/**
 * Starts the worker module `<basename>` that sits next to `callerFilename`, with the caller's own
 * extension (.js from dist, .ts from sources). Shared by every worker pool in the project.
 */
export function launchWorkerBeside(callerFilename: string, basename: string): Worker {
  const extension = extname(callerFilename);
  const workerPath = join(dirname(callerFilename), `${basename}${extension}`);
  if (!existsSync(workerPath)) throw new Error(`worker entry not found at ${workerPath}`);
  if (extension !== '.ts') return new Worker(workerPath);
  // transpile-only: the sources are type-checked by `tsc`; here they only need to run, fast.
  const bootstrap = [
    `require(${JSON.stringify(require.resolve('ts-node'))}).register({ transpileOnly: true, projectSearchDir: ${JSON.stringify(dirname(workerPath))}, compilerOptions: { module: 'commonjs' } });`,
    `require(${JSON.stringify(workerPath)});`,
  ].join('\n');
  return new Worker(bootstrap, { eval: true });
}
