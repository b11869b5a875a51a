import type { Worker } from 'node:worker_threads';
import { EngineError } from '../../contracts';
import { launchWorkerBeside } from '../../runtime/worker-launcher';
import type { FliteJobMessage, FliteShutdownMessage, FliteWorkerMessage } from './flite-worker-protocol';

export interface FliteSentenceResult {
  wav: Uint8Array;
  /** Time the sentence waited for a free worker, and the worker's synthesis time. */
  queueWaitMs: number;
  runMs: number;
}

interface QueuedJob {
  message: FliteJobMessage;
  enqueuedAt: number;
  signal: AbortSignal | undefined;
  resolve: (result: FliteSentenceResult) => void;
  reject: (error: EngineError) => void;
}

interface WorkerSlot {
  worker: Worker;
  ready: boolean;
  job: QueuedJob | undefined;
  jobStartedAt: number;
  timer: NodeJS.Timeout | undefined;
}

/**
 * Flite worker threads and the FIFO of sentences waiting for them. Sentences from all calls share
 * the queue; a stream submits its next sentence only when the previous one is back, so calls
 * interleave instead of one long answer holding the workers. A worker that crashes or exceeds the
 * per-sentence timeout is terminated and replaced on the next sentence.
 */
export class FliteWorkerPool {
  private readonly slots: Array<WorkerSlot | undefined>;
  private readonly queue: QueuedJob[] = [];
  private nextJobId = 1;
  private closed = false;

  constructor(
    private readonly engine: string,
    workerCount: number,
    private readonly sentenceTimeoutMs: number,
  ) {
    if (!Number.isInteger(workerCount) || workerCount < 1) throw new Error(`${engine}: workers must be a positive integer, got ${workerCount}`);
    this.slots = new Array<WorkerSlot | undefined>(workerCount).fill(undefined);
  }

  synthesize(job: Omit<FliteJobMessage, 'id'>, signal?: AbortSignal): Promise<FliteSentenceResult> {
    if (this.closed) return Promise.reject(new EngineError(this.engine, 'unavailable', `${this.engine}: engine closed`, false));
    return new Promise((resolve, reject) => {
      this.queue.push({ message: { ...job, id: this.nextJobId++ }, enqueuedAt: performance.now(), signal, resolve, reject });
      this.dispatch();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.reject(new EngineError(this.engine, 'cancelled', `${this.engine}: engine closed`, false));
    await Promise.all(this.slots.map((_, index) => this.retire(index, 'engine closed', true)));
  }

  private dispatch(): void {
    for (let index = 0; index < this.slots.length && this.queue.length > 0; index++) {
      const slot = this.slots[index] ?? this.spawn(index);
      if (!slot.ready || slot.job !== undefined) continue;
      const job = this.nextLiveJob();
      if (job === undefined) return;
      slot.job = job;
      slot.jobStartedAt = performance.now();
      slot.worker.ref();
      slot.timer = setTimeout(() => void this.retire(index, `sentence took longer than ${this.sentenceTimeoutMs} ms`), this.sentenceTimeoutMs);
      slot.worker.postMessage(job.message);
    }
  }

  /** Sentences whose stream was cancelled while they waited are dropped, never synthesized. */
  private nextLiveJob(): QueuedJob | undefined {
    for (let job = this.queue.shift(); job !== undefined; job = this.queue.shift()) {
      if (job.signal?.aborted !== true) return job;
      job.reject(new EngineError(this.engine, 'cancelled', `${this.engine}: synthesis cancelled`, false));
    }
    return undefined;
  }

  private spawn(index: number): WorkerSlot {
    const slot: WorkerSlot = { worker: launchFliteWorker(), ready: false, job: undefined, jobStartedAt: 0, timer: undefined };
    this.slots[index] = slot;
    slot.worker.unref();
    slot.worker.on('message', (message: FliteWorkerMessage) => this.onMessage(slot, message));
    slot.worker.on('error', (error) => void this.retire(index, `worker failed: ${error.message}`));
    slot.worker.on('exit', (code) => {
      if (this.slots[index] === slot) void this.retire(index, `worker exited with code ${code}`);
    });
    return slot;
  }

  private onMessage(slot: WorkerSlot, message: FliteWorkerMessage): void {
    if (message.type === 'ready') {
      slot.ready = true;
      this.dispatch();
      return;
    }
    const job = slot.job;
    if (job === undefined || job.message.id !== message.id) return;
    clearTimeout(slot.timer);
    slot.job = undefined;
    slot.worker.unref();
    if (message.type === 'done') {
      job.resolve({ wav: message.wav, queueWaitMs: slot.jobStartedAt - job.enqueuedAt, runMs: message.runMs });
    } else {
      job.reject(new EngineError(this.engine, 'inference_failed', `${this.engine}: ${message.message}`, false));
    }
    this.dispatch();
  }

  /**
   * Ends a worker: its sentence in flight fails (retryable: a fresh worker may manage it) and, if
   * the worker never got ready, so does the queue, rather than respawning a worker that cannot
   * start in a loop.
   */
  private async retire(index: number, reason: string, graceful = false): Promise<void> {
    const slot = this.slots[index];
    if (slot === undefined) return;
    this.slots[index] = undefined;
    clearTimeout(slot.timer);
    const error = new EngineError(this.engine, 'inference_failed', `${this.engine}: ${reason}`, true);
    slot.job?.reject(error);
    if (!slot.ready) for (const job of this.queue.splice(0)) job.reject(error);
    slot.worker.removeAllListeners('exit');
    // An idle worker asked to shut down exits by itself; terminate() is for one that is stuck.
    if (graceful && slot.ready && slot.job === undefined && (await askToExit(slot.worker))) return;
    await slot.worker.terminate();
    if (!this.closed) this.dispatch();
  }
}

const GRACEFUL_EXIT_MS = 1_000;

function askToExit(worker: Worker): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), GRACEFUL_EXIT_MS);
    worker.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
    worker.postMessage({ type: 'shutdown' } satisfies FliteShutdownMessage);
  });
}

/** `flite.worker.js` from dist, `flite.worker.ts` (with ts-node registered first) from sources. */
function launchFliteWorker(): Worker {
  return launchWorkerBeside(__filename, 'flite.worker');
}
