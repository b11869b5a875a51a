import 'reflect-metadata';
import cluster from 'node:cluster';
import type { INestApplication } from '@nestjs/common';
import { ConfigValidationError, loadAppConfig, type AppConfig } from '@switchboard/config';
import { ClusterLink } from './cluster/cluster-link';
import { ClusterPrimary } from './cluster/cluster-primary';
import { SHARED_EMBEDDED_DATABASE_ENV } from './cluster/cluster-messages';
import { FirstRunSignInService } from './console/first-run-sign-in.service';
import { redactUrls } from './logging/log-redaction';
import { useLoggerInPrimary } from './logging/primary-logger';
import { StartupLogGate } from './logging/startup-log-gate';
import { drainAllowanceMs } from './server-drain/drain-allowance';
import { DrainCoordinator } from './server-drain/drain-coordinator';
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
    boundShutdown(config, PRIMARY_SHUTDOWN_MARGIN_MS);
    await new ClusterPrimary(config, useLoggerInPrimary(config)).start();
    return;
  }
  const sharedEmbeddedUrl = cluster.isWorker ? process.env[SHARED_EMBEDDED_DATABASE_ENV] : undefined;
  if (sharedEmbeddedUrl !== undefined) config = { ...config, database: { ...config.database, sharedEmbeddedUrl } };
  boundShutdown(config, 0);
  const app = await createServerApp(config);
  await app.listen(config.port, '0.0.0.0');
  app.get(StartupLogGate).open();
  // The last line of a start says where the console is (or gives the first-run sign-in link): in a
  // cluster once every worker listens, after the primary said so.
  app.get(ClusterLink).whenClusterListening(() => app.get(FirstRunSignInService).announce());
  process.once('SIGTERM', () => void drainThenClose(app, config));
}

/**
 * SIGTERM: drain (readiness 503, no new work claimed, live calls finish or hear DRAIN_MESSAGE at the
 * bound), then the same shutdown as SIGINT. DRAIN_TIMEOUT_S=0 skips the drain.
 */
async function drainThenClose(app: INestApplication, config: AppConfig): Promise<void> {
  try {
    if (config.drain.timeoutMs > 0) await app.get(DrainCoordinator).drain();
  } catch (error) {
    process.stderr.write(`switchboard: the drain failed, shutting down now: ${error instanceof Error ? error.message : String(error)}\n`);
  }
  await app.close();
  process.exit(0);
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
