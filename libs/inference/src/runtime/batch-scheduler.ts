/**
 * Micro-batching for one model: requests from many calls are gathered for at most
 * `batchMaxDelayMs` (or until `maxBatchRows` rows are waiting), run as one batch on a worker, and
 * the outputs are split back to each caller. Only requests with equal compatibility keys share a
 * batch (same shapes apart from the batch axis, same shared inputs).
 *
 * Accounting: a batch's measured run time is charged to its requests in proportion to their rows.
 */
import { performance } from 'node:perf_hooks';
import { EngineError, type ComputeUsageSink, type InferenceDevice, type ModelRunResult, type RunContext, type TensorData } from '../contracts';
import type { BatchRecord } from './inference-runtime-options';
import { batchRowsOf, compatibilityKey, concatenate, copyTensor, sliceRows, type ResolvedBatchAxes } from './tensor-batching';
import { SEQUENCE_LOST_MESSAGE } from './sequence-store';
import { RUNTIME_ENGINE, type WorkerPool } from './worker-pool';

export interface BatchSchedulerConfig {
  model: string;
  device: InferenceDevice;
  maxBatchRows: number;
  batchMaxDelayMs: number;
  /** With an idle worker, gather only what arrives in the current tick (see InferenceRuntimeOptions). */
  dispatchWhenIdle: boolean;
  axes: ResolvedBatchAxes;
  /** The model's inputs, in its order (how compatibility keys are built). */
  inputNames: readonly string[];
  pool: WorkerPool;
  usageSink?: ComputeUsageSink;
  onBatch?: (batch: BatchRecord) => void;
}

interface QueuedRequest {
  readonly feeds: Record<string, TensorData>;
  readonly rows: number;
  readonly callId: string | undefined;
  readonly enqueuedAt: number;
  readonly resolve: (result: ModelRunResult) => void;
  readonly reject: (error: Error) => void;
  settled: boolean;
  detachAbort?: () => void;
}

interface OpenBatch {
  readonly key: string;
  readonly requests: QueuedRequest[];
  rows: number;
  timer: NodeJS.Timeout | NodeJS.Immediate;
}

export class BatchScheduler {
  private readonly open = new Map<string, OpenBatch>();

  constructor(private readonly config: BatchSchedulerConfig) {}

  submit(feeds: Record<string, TensorData>, context: RunContext = {}): Promise<ModelRunResult> {
    const { signal, callId } = context;
    if (signal?.aborted) return Promise.reject(cancelled(this.config.model));
    let rows: number;
    let key: string;
    try {
      rows = batchRowsOf(feeds, this.config.axes);
      key = this.config.maxBatchRows === 1 ? '' : compatibilityKey(feeds, this.config.axes, this.config.inputNames);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      return Promise.reject(new EngineError(RUNTIME_ENGINE, 'bad_request', `${this.config.model}: ${message}`, false));
    }
    return new Promise<ModelRunResult>((resolve, reject) => {
      const request: QueuedRequest = { feeds, rows, callId, enqueuedAt: performance.now(), resolve, reject, settled: false };
      if (signal) {
        const onAbort = (): void => this.abort(request, key);
        signal.addEventListener('abort', onAbort, { once: true });
        request.detachAbort = () => signal.removeEventListener('abort', onAbort);
      }
      this.enqueue(request, key);
    });
  }

  /** Runs everything still gathering now (used on close, so nothing waits on a timer). */
  flushAll(): void {
    for (const batch of [...this.open.values()]) this.flush(batch);
  }

  private enqueue(request: QueuedRequest, key: string): void {
    const { maxBatchRows } = this.config;
    let batch = this.open.get(key);
    if (batch && batch.rows + request.rows > maxBatchRows) {
      this.flush(batch);
      batch = undefined;
    }
    if (request.rows >= maxBatchRows) {
      // Full on its own: nothing to wait for.
      void this.execute([request], 0);
      return;
    }
    if (!batch) {
      const { batchMaxDelayMs, dispatchWhenIdle, pool } = this.config;
      const created: OpenBatch = { key, requests: [], rows: 0, timer: undefined as unknown as NodeJS.Timeout };
      const delayMs = dispatchWhenIdle && pool.hasIdleWorker() ? 0 : batchMaxDelayMs;
      // 0 ms still gathers what is submitted in the same tick (a loop over many streams).
      created.timer = delayMs > 0 ? setTimeout(() => this.flush(created), delayMs) : setImmediate(() => this.flush(created));
      this.open.set(key, created);
      batch = created;
    }
    batch.requests.push(request);
    batch.rows += request.rows;
    if (batch.rows >= maxBatchRows) this.flush(batch);
  }

  private flush(batch: OpenBatch): void {
    if (this.open.get(batch.key) !== batch) return;
    this.open.delete(batch.key);
    clearTimeout(batch.timer as NodeJS.Timeout);
    clearImmediate(batch.timer as NodeJS.Immediate);
    const live = batch.requests.filter((request) => !request.settled);
    if (live.length === 0) return;
    void this.execute(live, performance.now() - live[0]!.enqueuedAt);
  }

  private abort(request: QueuedRequest, key: string): void {
    if (request.settled) return;
    const batch = this.open.get(key);
    const index = batch ? batch.requests.indexOf(request) : -1;
    if (batch && index >= 0) {
      batch.requests.splice(index, 1);
      batch.rows -= request.rows;
    }
    // A request already running finishes in its batch; only this caller stops waiting.
    settle(request, () => request.reject(cancelled(this.config.model)));
  }

  private async execute(requests: QueuedRequest[], gatherMs: number): Promise<void> {
    const { model, pool, device } = this.config;
    let response: Awaited<ReturnType<WorkerPool['run']>>;
    try {
      response = await pool.run(model, this.batchFeeds(requests));
    } catch (error) {
      await this.handleFailure(requests, error);
      return;
    }
    const doneAt = performance.now();
    // A worker just became free: what gathered while it was busy runs now rather than at its timer.
    if (this.config.dispatchWhenIdle) this.flushAll();
    const batchRows = requests.reduce((sum, request) => sum + request.rows, 0);
    let rowStart = 0;
    const queueWaitsMs: number[] = [];
    for (const request of requests) {
      const outputs = requests.length === 1 ? response.outputs : this.sliceOutputs(response.outputs, rowStart, request.rows);
      rowStart += request.rows;
      const share = request.rows / batchRows;
      if (request.callId !== undefined) {
        this.config.usageSink?.record({ callId: request.callId, model, device, seconds: (response.runMs / 1000) * share, rows: request.rows, batchRows });
      }
      const queueWaitMs = Math.max(0, doneAt - request.enqueuedAt - response.runMs);
      queueWaitsMs.push(queueWaitMs);
      settle(request, () => request.resolve({ outputs, queueWaitMs, runMs: response.runMs }));
    }
    this.config.onBatch?.({ model, device, requests: requests.length, rows: batchRows, gatherMs, queueWaitsMs, runMs: response.runMs });
  }

  /**
   * A crashed worker fails the whole batch as retryable. An error from onnxruntime itself fails a
   * lone request; in a batch, each request is re-run alone so one bad request fails only itself.
   */
  private async handleFailure(requests: QueuedRequest[], error: unknown): Promise<void> {
    if (error instanceof EngineError) {
      for (const request of requests) settle(request, () => request.reject(error));
      return;
    }
    if (requests.length > 1) {
      await Promise.all(requests.map((request) => this.execute([request], 0)));
      return;
    }
    const failure = runFailure(this.config.model, error);
    for (const request of requests) settle(request, () => request.reject(failure));
  }

  private batchFeeds(requests: readonly QueuedRequest[]): Record<string, TensorData> {
    const first = requests[0]!;
    const feeds: Record<string, TensorData> = {};
    for (const name of Object.keys(first.feeds)) {
      const axis = this.config.axes.inputs.get(name);
      // Always a private copy: its buffer is transferred to the worker, the callers' are not.
      feeds[name] =
        axis === undefined || requests.length === 1 ? copyTensor(first.feeds[name]!) : concatenate(requests.map((request) => request.feeds[name]!), axis);
    }
    return feeds;
  }

  private sliceOutputs(outputs: Record<string, TensorData>, rowStart: number, rows: number): Record<string, TensorData> {
    const sliced: Record<string, TensorData> = {};
    for (const [name, tensor] of Object.entries(outputs)) {
      const axis = this.config.axes.outputs.get(name);
      sliced[name] = axis === undefined ? copyTensor(tensor) : sliceRows(tensor, axis, rowStart, rows);
    }
    return sliced;
  }
}

function settle(request: QueuedRequest, action: () => void): void {
  if (request.settled) return;
  request.settled = true;
  request.detachAbort?.();
  action();
}

/** An error from onnxruntime or the worker as the caller sees it; lost sequence state is retryable (start over). */
export function runFailure(model: string, error: unknown): EngineError {
  const message = error instanceof Error ? error.message : String(error);
  const retryable = message.startsWith(SEQUENCE_LOST_MESSAGE);
  return new EngineError(RUNTIME_ENGINE, 'inference_failed', `${model}: run failed: ${message}`, retryable, { cause: error });
}

export function cancelled(model: string): EngineError {
  return new EngineError(RUNTIME_ENGINE, 'cancelled', `${model}: run cancelled by the caller`, false);
}
