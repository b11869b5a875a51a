import 'reflect-metadata';
import cluster from 'node:cluster';
import { ConfigValidationError, loadAppConfig, type AppConfig } from '@switchboard/config';
import { ClusterPrimary } from './cluster/cluster-primary';
import { SHARED_EMBEDDED_DATABASE_ENV } from './cluster/cluster-messages';
import { createServerApp } from './server-app';

/** The primary waits for its workers' own bounded shutdown, then a little longer, then gives up. */
const PRIMARY_SHUTDOWN_MARGIN_MS = 10_000;

async function main(): Promise<void> {
  let config: AppConfig;
  try {
    config = loadAppConfig();
  } catch (error) {
    if (error instanceof ConfigValidationError) {
      // One plain message listing every bad variable; the logger is not up yet.
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  if (cluster.isPrimary && config.workers > 1) {
    boundShutdown(config.shutdownTimeoutMs + PRIMARY_SHUTDOWN_MARGIN_MS);
    await new ClusterPrimary(config).start();
    return;
  }
  const sharedEmbeddedUrl = cluster.isWorker ? process.env[SHARED_EMBEDDED_DATABASE_ENV] : undefined;
  if (sharedEmbeddedUrl !== undefined) config = { ...config, database: { ...config.database, sharedEmbeddedUrl } };
  boundShutdown(config.shutdownTimeoutMs);
  const app = await createServerApp(config);
  await app.listen(config.port, '0.0.0.0');
}

/**
 * Nest's shutdown hooks end every live call and flush what they buffered, which waits on the
 * database and on sockets. Should either hang (a wedged database answers nothing), the process
 * still exits after `timeoutMs`: what was not stored is finished by the reconciler of the next
 * process, and an orchestrator's SIGKILL never becomes the only way out.
 */
function boundShutdown(timeoutMs: number): void {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      setTimeout(() => {
        process.stderr.write(`switchboard: shutdown did not finish within ${timeoutMs} ms of ${signal}; exiting now\n`);
        process.exit(1);
      }, timeoutMs).unref();
    });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`switchboard failed to start: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
  process.exit(1);
});
