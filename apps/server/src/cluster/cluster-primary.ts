import cluster, { type Worker } from 'node:cluster';
import type { AppConfig } from '@switchboard/config';
import { EMBEDDED_DEFAULT_MAX_CONNECTIONS, serveEmbeddedDatabase, type EmbeddedPostgres } from '@switchboard/persistence';
import { AggregatorRegistry } from 'prom-client';
import { drainAllowanceMs } from '../server-drain/drain-allowance';
import { isSwitchboardMessage, SHARED_EMBEDDED_DATABASE_ENV, type ClusterListening, type MetricsResponse, type WorkerToPrimary } from './cluster-messages';

/** A worker that dies is replaced after this long... */
const RESTART_DELAY_MS = 1000;
/** ...unless this many died within the window: then something is wrong with every worker, and the server stops. */
const CRASH_LOOP_LIMIT = 5;
const CRASH_LOOP_WINDOW_MS = 60_000;
/** After the workers' own shutdown bound, the primary waits this much longer before SIGKILL. */
const WORKER_EXIT_GRACE_MS = 2000;

type Log = (line: string) => void;

/**
 * The cluster primary (WORKERS > 1): it carries no calls itself. It serves the embedded database
 * when there is no DATABASE_URL (one PGlite server; every worker connects to it over loopback),
 * forks the workers (the first alone, so migrations and the first-run bootstrap happen once),
 * replaces a worker that dies, relays the few messages that must reach another worker, and on
 * SIGTERM/SIGINT stops every worker within the shutdown bound before it stops the database.
 *
 * node:cluster hands each accepted connection to one worker (round-robin on Linux), so a media
 * WebSocket stays in the worker that accepted it for its whole life; that worker claims the
 * stream token through the database, which is why any worker can take any call.
 */
export class ClusterPrimary {
  private embedded: EmbeddedPostgres | null = null;
  private readonly workerEnv: Record<string, string> = {};
  private readonly aggregator = new AggregatorRegistry();
  private readonly recentDeaths: number[] = [];
  private stopping: Promise<void> | undefined;

  constructor(
    private readonly config: AppConfig,
    /** main.ts passes the server's logger (logging/primary-logger.ts). */
    private readonly log: Log = (line) => process.stderr.write(`switchboard primary: ${line}\n`),
  ) {}

  async start(): Promise<void> {
    if (this.config.database.url === undefined) {
      // Each worker keeps one connection; a few more for the migrate CLI and diagnostics.
      this.embedded = await serveEmbeddedDatabase(this.config.database.dataDir, {
        maxConnections: this.config.workers + EMBEDDED_DEFAULT_MAX_CONNECTIONS,
      });
      this.workerEnv[SHARED_EMBEDDED_DATABASE_ENV] = this.embedded.connectionString;
    }
    for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => void this.stop(signal).then(() => process.exit(0)));

    try {
      await this.fork({});
      // The first worker migrated (when MIGRATE_ON_START) and bootstrapped; the others need not.
      await Promise.all(Array.from({ length: this.config.workers - 1 }, () => this.fork({ MIGRATE_ON_START: 'false' })));
    } catch (error) {
      await this.stop('startup failure');
      throw error;
    }
    cluster.on('exit', (worker, code, signal) => this.onWorkerExit(worker, code, signal));
    this.log(`${this.config.workers} workers listening on port ${this.config.port} (pid ${process.pid} is the primary)`);
    // After the line above: the first worker's answer (where the console is) is the start's last line.
    for (const worker of Object.values(cluster.workers ?? {})) {
      if (worker?.isConnected()) worker.send({ type: 'switchboard:cluster-listening' } satisfies ClusterListening);
    }
  }

  /** Stops every worker (each ends its calls and flushes), then the embedded database; exits the process. */
  stop(reason: string): Promise<void> {
    this.stopping ??= this.stopAll(reason);
    return this.stopping;
  }

  private fork(extraEnv: Record<string, string>): Promise<Worker> {
    const worker = cluster.fork({ ...this.workerEnv, ...extraEnv });
    worker.on('message', (message: unknown) => this.onWorkerMessage(worker, message));
    return new Promise((resolve, reject) => {
      const onListening = () => {
        worker.off('exit', onExit);
        resolve(worker);
      };
      const onExit = (code: number | null, signal: string | null) => {
        worker.off('listening', onListening);
        reject(new Error(`worker ${worker.id} exited before listening (code ${code}, signal ${signal})`));
      };
      worker.once('listening', onListening).once('exit', onExit);
    });
  }

  private onWorkerExit(worker: Worker, code: number | null, signal: string | null): void {
    if (this.stopping) return;
    const now = Date.now();
    this.recentDeaths.push(now);
    while (this.recentDeaths.length > 0 && (this.recentDeaths[0] as number) < now - CRASH_LOOP_WINDOW_MS) this.recentDeaths.shift();
    // Its calls are lost with it; the reconciler of a surviving worker ends their records.
    this.log(`worker ${worker.id} (pid ${worker.process.pid}) died (code ${code}, signal ${signal})`);
    if (this.recentDeaths.length >= CRASH_LOOP_LIMIT) {
      this.log(`${this.recentDeaths.length} workers died within ${CRASH_LOOP_WINDOW_MS / 1000} s; stopping the server`);
      void this.stop('crash loop').finally(() => process.exit(1));
      return;
    }
    setTimeout(() => {
      if (this.stopping) return;
      this.fork({ MIGRATE_ON_START: 'false' }).then(
        (replacement) => this.log(`worker ${replacement.id} (pid ${replacement.process.pid}) replaced it`),
        (error: unknown) => this.log(`the replacement failed to start: ${error instanceof Error ? error.message : String(error)}`),
      );
    }, RESTART_DELAY_MS).unref();
  }

  private onWorkerMessage(worker: Worker, message: unknown): void {
    if (!isSwitchboardMessage(message)) return;
    const request = message as WorkerToPrimary;
    if (request.type === 'switchboard:call-note') {
      for (const other of Object.values(cluster.workers ?? {})) {
        if (other && other !== worker && other.isConnected()) other.send(request);
      }
    } else if (request.type === 'switchboard:metrics-request') {
      const reply = (response: Omit<MetricsResponse, 'type' | 'requestId'>) => {
        if (worker.isConnected()) worker.send({ type: 'switchboard:metrics-response', requestId: request.requestId, ...response });
      };
      this.aggregator.clusterMetrics().then(
        (text) => reply({ text }),
        (error: unknown) => reply({ error: error instanceof Error ? error.message : String(error) }),
      );
    }
  }

  private async stopAll(reason: string): Promise<void> {
    // SIGTERM is passed on, so every worker drains (readiness 503, live calls finish); anything else
    // (SIGINT, a crash loop, a failed start) stops the workers at once with SIGINT.
    const drain = reason === 'SIGTERM' && this.config.drain.timeoutMs > 0;
    this.log(`stopping (${reason}): every worker ${drain ? 'drains its calls' : 'ends its calls'}, then the database stops`);
    const workers = Object.values(cluster.workers ?? {}).filter((worker): worker is Worker => worker !== undefined);
    const exited = workers.map((worker) =>
      worker.isDead() ? Promise.resolve() : new Promise<void>((resolve) => worker.once('exit', () => resolve())),
    );
    for (const worker of workers) worker.process.kill(drain ? 'SIGTERM' : 'SIGINT');
    const deadline = setTimeout(() => {
      for (const worker of workers) if (!worker.isDead()) worker.process.kill('SIGKILL');
    }, (drain ? drainAllowanceMs(this.config) : 0) + this.config.shutdownTimeoutMs + WORKER_EXIT_GRACE_MS);
    await Promise.all(exited);
    clearTimeout(deadline);
    await this.embedded?.stop();
  }
}
