import type { INestApplication } from '@nestjs/common';
import type { AppConfig } from '@switchboard/config';
import { ClusterLink } from './cluster/cluster-link';
import { FirstRunSignInService } from './console/first-run-sign-in.service';
import { StartupLogGate } from './logging/startup-log-gate';
import { DrainCoordinator } from './server-drain/drain-coordinator';
import { createServerApp } from './server-app';

/**
 * What a serving process does (a single server, or one worker of a cluster): builds the app,
 * listens, ends its start with the console line, and drains on SIGTERM. main.ts loads this module
 * only in such a process, so a cluster primary does not load the whole application first.
 */
export async function serve(config: AppConfig): Promise<void> {
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
