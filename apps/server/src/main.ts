import 'reflect-metadata';
import cluster from 'node:cluster';
import { ConfigValidationError, loadAppConfig, type AppConfig } from '@switchboard/config';
import { ClusterPrimary } from './cluster/cluster-primary';
import { SHARED_EMBEDDED_DATABASE_ENV } from './cluster/cluster-messages';
import { redactUrls } from './logging/log-redaction';
import { useLoggerInPrimary } from './logging/primary-logger';
import { drainAllowanceMs } from './server-drain/drain-allowance';

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
    boundShutdown(config, PRIMARY_SHUTDOWN_MARGIN_MS);
    await new ClusterPrimary(config, useLoggerInPrimary(config)).start();
    return;
  }
  const sharedEmbeddedUrl = cluster.isWorker ? process.env[SHARED_EMBEDDED_DATABASE_ENV] : undefined;
  if (sharedEmbeddedUrl !== undefined) config = { ...config, database: { ...config.database, sharedEmbeddedUrl } };
  boundShutdown(config, 0);
  // Loaded here, not above: the application's modules take seconds to load, which a cluster
  // primary (it serves no requests) would spend before forking its first worker.
  const { serve } = await import('./server-process');
  await serve(config);
}

/**
 * Nest's shutdown hooks end every live call and flush what they buffered, which waits on the
 * database and on sockets. Should either hang (a wedged database answers nothing), the process
 * still exits after SHUTDOWN_TIMEOUT_MS (after SIGTERM, plus the drain's allowance): what was not stored is finished by the reconciler of the next
 * process, and an orchestrator's SIGKILL never becomes the only way out.
 */
function boundShutdown(config: AppConfig, marginMs: number): void {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    // SIGTERM drains first (SIGINT does not).
    const timeoutMs = (signal === 'SIGTERM' ? drainAllowanceMs(config) : 0) + config.shutdownTimeoutMs + marginMs;
    process.once(signal, () => {
      setTimeout(() => {
        process.stderr.write(`switchboard: shutdown did not finish within ${timeoutMs} ms of ${signal}; exiting now\n`);
        process.exit(1);
      }, timeoutMs).unref();
    });
  }
}

main().catch((error: unknown) => {
  // Written before (or without) the logger: the same redaction list, applied by hand.
  process.stderr.write(`switchboard failed to start: ${redactUrls(error instanceof Error ? error.stack ?? error.message : String(error))}\n`);
  process.exit(1);
});
