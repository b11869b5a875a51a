/**
 * Starts an inference worker thread from wherever this module runs: compiled JavaScript (dist)
 * starts `inference-worker.js` directly; TypeScript sources (ts-node, Jest) start a small bootstrap
 * that registers ts-node in the new thread first, because a worker does not inherit the parent's
 * require hooks (Jest's transformer or ts-node's).
 */
import { existsSync } from 'node:fs';
import { extname, join } from 'node:path';
import { Worker } from 'node:worker_threads';

const WORKER_BASENAME = 'inference-worker';

export function launchInferenceWorker(): Worker {
  const extension = extname(__filename);
  const workerPath = join(__dirname, `${WORKER_BASENAME}${extension}`);
  if (!existsSync(workerPath)) throw new Error(`inference worker entry not found at ${workerPath}`);
  if (extension !== '.ts') return new Worker(workerPath);
  // transpile-only: the sources are type-checked by `tsc`; here they only need to run, fast.
  const bootstrap = [
    `require(${JSON.stringify(require.resolve('ts-node'))}).register({ transpileOnly: true, projectSearchDir: ${JSON.stringify(__dirname)}, compilerOptions: { module: 'commonjs' } });`,
    `require(${JSON.stringify(workerPath)});`,
  ].join('\n');
  return new Worker(bootstrap, { eval: true });
}
