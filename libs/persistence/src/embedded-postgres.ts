import { extname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { acquireDataDirLock } from './data-dir-lock';
import { embeddedPasswordPath, loadOrCreateEmbeddedPassword } from './embedded-password';
import { PersistenceError } from './persistence.errors';
import type { EmbeddedWorkerConfig, EmbeddedWorkerMessage } from './embedded-postgres.worker';

/*
 * Embedded PostgreSQL: PGlite (Postgres compiled to WASM) served over the Postgres wire
 * protocol on a loopback port, so Prisma, node-postgres and the Prisma migrate CLI all talk to
 * it exactly as they would to a real server. It is the default when no DATABASE_URL is
 * configured: a self-hoster gets a working install with zero services.
 *
 * It runs in a worker thread: PGlite executes SQL synchronously, and on the main thread each
 * query would block the event loop that carries live call audio. (A side benefit: PGlite loads
 * its WASM with dynamic import(), which Jest's module sandbox cannot run; a worker is plain Node.)
 *
 * PGlite has ONE backend session. pglite-socket multiplexes client connections onto it with a
 * statement queue; while one connection is inside a transaction, statements from every other
 * connection wait in the queue until it commits or rolls back (checked in
 * test/integration/persistence/embedded-postgres.spec.ts: a second connection's SELECT does not
 * complete while the first holds an open transaction, and never sees its uncommitted rows).
 * So transactions are isolated only by being serialised, not by MVCC, and all connections share
 * session state (prepared statements, SET, temp tables), which the multiplexer's authors say is
 * not guaranteed to work for every client. The app therefore uses a pool of ONE connection
 * against it (no throughput lost: PGlite runs one statement at a time anyway), and the server
 * accepts a few more sockets only for the migrate CLI child process and diagnostics.
 *
 * It requires a password (pglite-socket checks none: see embedded-postgres-auth.ts), generated once
 * into `<dataDir>.password` (mode 0600) and carried in `connectionString`, so that another local
 * user's process cannot connect to the loopback port.
 */

export interface EmbeddedPostgresOptions {
  /** Directory holding the database files; created if missing. */
  dataDir: string;
  /** Loopback port; 0 (default) lets the OS pick a free one. */
  port?: number;
  /** Socket connections accepted at once; see the note above for why this stays small. */
  maxConnections?: number;
  /** Give up starting after this long (first start initialises the data folder). */
  startTimeoutMs?: number;
  /** A client that has not authenticated by then is disconnected (default 10 s). */
  handshakeTimeoutMs?: number;
}

export interface EmbeddedPostgres {
  readonly connectionString: string;
  readonly port: number;
  readonly dataDir: string;
  /** Closes client sockets, then PGlite (which flushes its files). Safe to call twice. */
  stop(): Promise<void>;
}

export const EMBEDDED_DEFAULT_MAX_CONNECTIONS = 4;
const DEFAULT_START_TIMEOUT_MS = 120_000;
const STOP_TIMEOUT_MS = 30_000;

export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const { dataDir } = options;
  const lock = acquireDataDirLock(dataDir);
  let password: string;
  try {
    password = loadOrCreateEmbeddedPassword(embeddedPasswordPath(dataDir));
  } catch (error) {
    lock.release();
    throw new PersistenceError(
      'embedded_start_failed',
      `Could not read or create the embedded database's password file ${embeddedPasswordPath(dataDir)}: ${(error as Error).message}`,
      false,
      { cause: error },
    );
  }
  const config: EmbeddedWorkerConfig = {
    dataDir,
    port: options.port ?? 0,
    maxConnections: options.maxConnections ?? EMBEDDED_DEFAULT_MAX_CONNECTIONS,
    password,
    handshakeTimeoutMs: options.handshakeTimeoutMs,
  };
  const worker = spawnWorker(config);
  let port: number;
  try {
    port = await waitForListening(worker, options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS);
  } catch (error) {
    await worker.terminate();
    lock.release();
    const reason = error instanceof Error ? error.message : String(error);
    throw new PersistenceError(
      'embedded_start_failed',
      `Could not start the embedded PostgreSQL (PGlite) with data in ${dataDir}: ${reason}`,
      false,
      { cause: error },
    );
  }

  let stopping: Promise<void> | undefined;
  return {
    connectionString: `postgresql://postgres:${password}@127.0.0.1:${port}/postgres?sslmode=disable`,
    port,
    dataDir,
    stop: () => (stopping ??= stopWorker(worker).finally(() => lock.release())),
  };
}

function spawnWorker(config: EmbeddedWorkerConfig): Worker {
  // From TypeScript sources (ts-node, Jest) the worker file is .ts and needs ts-node's hook;
  // from the compiled build it is the .js next to this file.
  const extension = extname(__filename);
  return new Worker(join(__dirname, `embedded-postgres.worker${extension}`), {
    workerData: config,
    execArgv: extension === '.ts' ? ['--require', 'ts-node/register/transpile-only'] : [],
  });
}

function waitForListening(worker: Worker, timeoutMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => settle(new Error(`not listening after ${timeoutMs} ms`)), timeoutMs);
    const onMessage = (message: EmbeddedWorkerMessage) => {
      if (message.type === 'listening') settle(null, message.port);
      else if (message.type === 'failed') settle(new Error(message.message));
    };
    const onError = (error: Error) => settle(error);
    const onExit = (code: number) => settle(new Error(`worker exited with code ${code} before listening`));
    function settle(error: Error | null, port?: number) {
      clearTimeout(timer);
      worker.off('message', onMessage).off('error', onError).off('exit', onExit);
      if (error) reject(error);
      else resolve(port as number);
    }
    worker.on('message', onMessage).on('error', onError).on('exit', onExit);
  });
}

async function stopWorker(worker: Worker): Promise<void> {
  const stopped = new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, STOP_TIMEOUT_MS);
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    worker.on('message', (message: EmbeddedWorkerMessage) => message.type === 'stopped' && done());
    worker.once('exit', done);
  });
  worker.postMessage({ type: 'stop' });
  await stopped;
  await worker.terminate();
}
