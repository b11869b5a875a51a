/**
 * First module of the caller thread. A worker thread inherits none of its parent's require hooks:
 * the launcher (launchWorkerBeside, as the inference runtime's workers use) registers ts-node, and
 * this registers the tsconfig `paths` the callers' imports use (@switchboard/*), which the bench's
 * main thread got from `-r tsconfig-paths/register`. Then the caller module proper is loaded.
 */
import { loadConfig, register } from 'tsconfig-paths';

const config = loadConfig(__dirname);
if (config.resultType === 'failed') throw new Error(`caller thread: cannot read tsconfig paths from ${__dirname}: ${config.message}`);
register({ baseUrl: config.absoluteBaseUrl, paths: config.paths });

// Loaded only now: its imports need the paths registered above.
void import('./caller-worker');
