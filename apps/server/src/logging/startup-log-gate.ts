import cluster from 'node:cluster';
import type { AppConfig } from '@switchboard/config';

/** pino's number for `error`: what a held-back worker still prints while it starts. */
const ERROR_LEVEL = 50;
/** pino's number for `info`. */
const INFO_LEVEL = 30;
const LEVEL_VALUES: Record<AppConfig['logLevel'], number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Infinity };

/**
 * The workers of a cluster start alike: the first one's start-up lines (models, warnings about the
 * environment) are the cluster's, and the others would only print them again, once per core. So
 * every worker but the first holds back what it logs below `error` until it listens. At debug and
 * trace (LOG_LEVEL asks for everything) nothing is held back.
 */
export class StartupLogGate {
  private holding: boolean;

  constructor(holding: boolean) {
    this.holding = holding;
  }

  /** Holding in a cluster worker that is not the first (node:cluster numbers them from 1). */
  static forThisProcess(config: Pick<AppConfig, 'logLevel'>, worker: { id: number } | undefined = cluster.isWorker ? cluster.worker : undefined): StartupLogGate {
    return new StartupLogGate(worker !== undefined && worker.id !== 1 && LEVEL_VALUES[config.logLevel] >= INFO_LEVEL);
  }

  /** Whether a line at pino level `level` is printed now. */
  admits(level: number): boolean {
    return !this.holding || level >= ERROR_LEVEL;
  }

  /** The process listens: from now on it logs like any other. */
  open(): void {
    this.holding = false;
  }
}
