import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { startAuthenticatingFront, type AuthenticatingFront } from './embedded-postgres-auth';

/*
 * Runs inside a worker thread (see embedded-postgres.ts): PGlite executes SQL synchronously in
 * WASM, and on the main thread every query would stall the event loop that also carries live
 * call audio. Here it only stalls this thread.
 *
 * pglite-socket authenticates no one, so it listens on a Unix socket in a private (0700) folder, and
 * the loopback port is an authenticating front (embedded-postgres-auth.ts) that joins a client to it
 * only after the right password.
 */

export interface EmbeddedWorkerConfig {
  dataDir: string;
  port: number;
  maxConnections: number;
  /** What a client must answer to the front's password request. */
  password: string;
  handshakeTimeoutMs?: number;
}

export type EmbeddedWorkerMessage =
  | { type: 'listening'; port: number }
  | { type: 'failed'; message: string }
  | { type: 'stopped' };

async function serve(config: EmbeddedWorkerConfig): Promise<void> {
  const port = parentPort;
  if (!port) throw new Error('embedded-postgres.worker must run as a worker thread');
  const send = (message: EmbeddedWorkerMessage) => port.postMessage(message);

  let db: PGlite | undefined;
  let server: PGLiteSocketServer | undefined;
  let front: AuthenticatingFront | undefined;
  // mkdtemp creates it 0700: only this user can reach the unauthenticated socket inside.
  const socketDir = await mkdtemp(join(tmpdir(), 'switchboard-pglite-'));
  // Windows has no Unix sockets in the file system: a named pipe with the folder's random name.
  const innerPath = process.platform === 'win32' ? `\\\\.\\pipe\\${basename(socketDir)}` : join(socketDir, 'pglite.sock');
  const removeSocketDir = () => rm(socketDir, { recursive: true, force: true }).catch(() => undefined);
  try {
    await mkdir(config.dataDir, { recursive: true });
    db = await PGlite.create(config.dataDir);
    server = new PGLiteSocketServer({ db, path: innerPath, maxConnections: config.maxConnections });
    await server.start();
    front = await startAuthenticatingFront({ ...config, host: '127.0.0.1', innerPath });
    const [openDb, openServer, openFront] = [db, server, front];
    port.on('message', (message: unknown) => {
      if ((message as { type?: unknown }).type !== 'stop') return;
      void (async () => {
        await openFront.close();
        await openServer.stop();
        await openDb.close(); // flushes PGlite's files
        await removeSocketDir();
        send({ type: 'stopped' });
        port.close();
      })();
    });
    send({ type: 'listening', port: front.port });
  } catch (error) {
    await front?.close().catch(() => undefined);
    await server?.stop().catch(() => undefined);
    await db?.close().catch(() => undefined);
    await removeSocketDir();
    send({ type: 'failed', message: error instanceof Error ? error.message : String(error) });
    port.close();
  }
}

void serve(workerData as EmbeddedWorkerConfig);
