import { mkdir } from 'node:fs/promises';
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

/*
 * Runs inside a worker thread (see embedded-postgres.ts): PGlite executes SQL synchronously in
 * WASM, and on the main thread every query would stall the event loop that also carries live
 * call audio. Here it only stalls this thread.
 */

export interface EmbeddedWorkerConfig {
  dataDir: string;
  port: number;
  maxConnections: number;
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
  try {
    await mkdir(config.dataDir, { recursive: true });
    db = await PGlite.create(config.dataDir);
    const server = new PGLiteSocketServer({
      db,
      host: '127.0.0.1',
      port: config.port,
      maxConnections: config.maxConnections,
    });
    await server.start();
    const openDb = db;
    port.on('message', (message: unknown) => {
      if ((message as { type?: unknown }).type !== 'stop') return;
      void (async () => {
        await server.stop();
        await openDb.close(); // flushes PGlite's files
        send({ type: 'stopped' });
        port.close();
      })();
    });
    send({ type: 'listening', port: Number(server.getServerConn().split(':').pop()) });
  } catch (error) {
    await db?.close().catch(() => undefined);
    send({ type: 'failed', message: error instanceof Error ? error.message : String(error) });
    port.close();
  }
}

void serve(workerData as EmbeddedWorkerConfig);
