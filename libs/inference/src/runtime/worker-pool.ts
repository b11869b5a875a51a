/**
 * A fixed pool of inference worker threads. Every worker holds a session for every loaded model,
 * so a batch can go to whichever worker has the least work queued. A worker that dies is replaced
 * at once (its model loads are replayed first); the runs it had in flight fail as retryable.
 */
import type { Worker } from 'node:worker_threads';
import { EngineError, type InferenceDevice, type TensorData } from '../contracts';
import type { InferenceLogger } from './inference-runtime-options';
import { launchInferenceWorker } from './worker-launcher';
import type { StepOutcome, StepRunRecord } from './sequence-step-runner';
import { SEQUENCE_LOST_MESSAGE } from './sequence-store';
import type { StepBatching } from './step-batching';
import { tensorBytesOf, transferListOf, type SequenceStep, type TensorMetadata, type WorkerRequest, type WorkerResponse, type WorkerSessionSettings } from './worker-protocol';

export const RUNTIME_ENGINE = 'inference-runtime';
const MAX_RESTART_DELAY_MS = 30_000;

/** A request without its id: the pool numbers requests itself. */
type UnnumberedRequest = WorkerRequest extends infer R ? (R extends WorkerRequest ? Omit<R, 'requestId'> : never) : never;

interface PendingRequest {
  resolve(response: WorkerResponse): void;
  reject(error: Error): void;
}

interface WorkerSlot {
  readonly index: number;
  worker: Worker;
  readonly inFlight: Map<number, PendingRequest>;
  /** Set when we end the worker ourselves, so its exit is not treated as a crash. */
  expectedExit: boolean;
  /** False between a crash and the replacement's start: runs go to other workers meanwhile. */
  alive: boolean;
  /** Crashes since this slot's worker last answered anything: spaces out replacements. */
  crashesWithoutAnswer: number;
  /** Bumped when the worker is replaced: what the old one held for sequences is gone. */
  generation: number;
}

/** Where a stateful sequence's tensors live: the worker that ran its first step. */
interface SequenceHome {
  slot: WorkerSlot;
  generation: number;
}

/** Tensor bytes that crossed the thread boundary, both ways (what a worker-resident cache saves). */
export interface TransferStats {
  postedBytes: number;
  receivedBytes: number;
}

interface ModelLoad {
  modelKey: string;
  path: string;
  executionProvider: InferenceDevice;
  settings: WorkerSessionSettings;
}

export interface LoadedModelMetadata {
  inputs: TensorMetadata[];
  outputs: TensorMetadata[];
}

export class WorkerPool {
  private readonly slots: WorkerSlot[] = [];
  private readonly loads: ModelLoad[] = [];
  private nextRequestId = 1;
  private nextSlot = 0;
  private closed = false;
  private readonly sequenceHomes = new Map<string, SequenceHome>();
  private readonly transfers: TransferStats = { postedBytes: 0, receivedBytes: 0 };

  constructor(
    workerCount: number,
    private readonly logger: InferenceLogger,
  ) {
    for (let index = 0; index < workerCount; index++) this.slots.push(this.startSlot(index));
  }

  get workerCount(): number {
    return this.slots.length;
  }

  /** True when some live worker has nothing in flight (a batch sent now would start at once). */
  hasIdleWorker(): boolean {
    return this.slots.some((slot) => slot.alive && slot.inFlight.size === 0);
  }

  /** Asks one live worker whether a session can be created on a GPU provider (see provider-probes.ts). */
  async probe(provider: Exclude<InferenceDevice, 'cpu'>): Promise<{ available: boolean; reason: string }> {
    const slot = this.slots.find((candidate) => candidate.alive);
    if (!slot) throw new EngineError(RUNTIME_ENGINE, 'unavailable', 'every inference worker is restarting after a crash', true);
    const response = await this.send(slot, { type: 'probe', provider });
    if (response.type !== 'probed') throw unexpected(response);
    return { available: response.available, reason: response.reason };
  }

  /** Loads the model on `executionProvider` in every worker (and in every future replacement worker). */
  async load(modelKey: string, path: string, executionProvider: InferenceDevice, settings: WorkerSessionSettings): Promise<LoadedModelMetadata> {
    // Recorded first, so a worker replaced while this load is under way loads the model too.
    const load: ModelLoad = { modelKey, path, executionProvider, settings };
    this.loads.push(load);
    let responses: WorkerResponse[];
    try {
      const alive = this.slots.filter((slot) => slot.alive);
      if (alive.length === 0) throw new EngineError(RUNTIME_ENGINE, 'unavailable', 'every inference worker is restarting after a crash', true);
      responses = await Promise.all(alive.map((slot) => this.send(slot, { type: 'load', ...load })));
    } catch (error) {
      this.loads.splice(this.loads.indexOf(load), 1);
      throw error;
    }
    const first = responses[0]!;
    if (first.type !== 'loaded') throw unexpected(first);
    return { inputs: first.inputs, outputs: first.outputs };
  }

  /** Runs on the least busy worker; the feeds' buffers are transferred (unusable afterwards). */
  async run(modelKey: string, feeds: Record<string, TensorData>): Promise<{ outputs: Record<string, TensorData>; runMs: number; workerIndex: number }> {
    const slot = this.leastBusySlot();
    if (!slot) throw new EngineError(RUNTIME_ENGINE, 'unavailable', 'every inference worker is restarting after a crash', true);
    this.transfers.postedBytes += tensorBytesOf(feeds);
    const response = await this.send(slot, { type: 'run', modelKey, feeds }, transferListOf(feeds));
    if (response.type !== 'result') throw unexpected(response);
    this.transfers.receivedBytes += tensorBytesOf(response.outputs);
    return { outputs: response.outputs, runMs: response.runMs, workerIndex: slot.index };
  }

  /**
   * The worker a sequence's step must run on: a first step's is chosen now (the least busy) and
   * becomes the sequence's home, which holds its tensors; later steps run there. A home replaced
   * since fails the step as retryable (the caller starts the sequence over).
   */
  sequenceWorker(sequence: SequenceStep): number {
    if (sequence.first) {
      const slot = this.leastBusySlot();
      if (!slot) throw new EngineError(RUNTIME_ENGINE, 'unavailable', 'every inference worker is restarting after a crash', true);
      this.sequenceHomes.set(sequence.id, { slot, generation: slot.generation });
      return slot.index;
    }
    const home = this.sequenceHomes.get(sequence.id);
    if (!home) throw new EngineError(RUNTIME_ENGINE, 'bad_request', `sequence ${sequence.id} has no first step (or was ended)`, false);
    if (!home.slot.alive || home.slot.generation !== home.generation) {
      this.sequenceHomes.delete(sequence.id);
      throw new EngineError(RUNTIME_ENGINE, 'inference_failed', `sequence ${sequence.id}: ${SEQUENCE_LOST_MESSAGE} (its inference worker was restarted)`, true);
    }
    return home.slot.index;
  }

  /**
   * Runs steps of sequences homed on one worker (see sequenceWorker) as one request: the worker
   * joins those that can share a run. Each step gets its outputs or the reason it failed.
   */
  async runSteps(
    workerIndex: number,
    modelKey: string,
    steps: Array<{ feeds: Record<string, TensorData>; sequence: SequenceStep }>,
    batching: StepBatching,
  ): Promise<{ outcomes: StepOutcome[]; runs: StepRunRecord[] }> {
    const slot = this.slots[workerIndex];
    if (!slot?.alive) {
      throw new EngineError(RUNTIME_ENGINE, 'inference_failed', `${SEQUENCE_LOST_MESSAGE}: inference worker ${workerIndex} is restarting after a crash`, true);
    }
    const feeds = steps.map((step) => step.feeds);
    for (const stepFeeds of feeds) this.transfers.postedBytes += tensorBytesOf(stepFeeds);
    const response = await this.send(slot, { type: 'run_steps', modelKey, steps, batching }, transferListOf(...feeds));
    if (response.type !== 'step_results') throw unexpected(response);
    for (const outcome of response.outcomes) if ('outputs' in outcome) this.transfers.receivedBytes += tensorBytesOf(outcome.outputs);
    return { outcomes: response.outcomes, runs: response.runs };
  }

  /** Frees what a worker holds for the sequence; never throws (a crashed worker holds nothing). */
  async endSequence(sequenceId: string): Promise<void> {
    const home = this.sequenceHomes.get(sequenceId);
    this.sequenceHomes.delete(sequenceId);
    if (!home || !home.slot.alive || home.slot.generation !== home.generation || this.closed) return;
    await this.send(home.slot, { type: 'end_sequence', sequenceId }).catch(() => undefined);
  }

  /** Sequences whose first step ran and that were not ended yet. */
  get openSequences(): number {
    return this.sequenceHomes.size;
  }

  transferStats(): TransferStats {
    return { ...this.transfers };
  }

  /**
   * Ends one worker as if it had crashed: its in-flight runs fail (retryable) and a replacement
   * starts. For operators (a stuck native run) and for proving the recovery path in tests.
   */
  async terminateWorker(index: number): Promise<void> {
    const slot = this.slots[index];
    if (!slot) throw new RangeError(`no worker ${index} (pool has ${this.slots.length})`);
    await endWorker(slot.worker, { release: false, exitCode: 1 });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const closing = new EngineError(RUNTIME_ENGINE, 'cancelled', 'inference runtime closed', false);
    await Promise.all(this.slots.map((slot) => this.endSlot(slot, closing)));
  }

  /**
   * Ends the workers past the first `count`; nothing replaces them. For a runtime that learns, once
   * its provider is chosen, that it must run on fewer threads (WebGPU: onnx-inference-runtime.ts).
   */
  async keepWorkers(count: number): Promise<void> {
    const retired = this.slots.splice(count);
    const retiring = new EngineError(RUNTIME_ENGINE, 'cancelled', 'inference worker retired', false);
    await Promise.all(retired.map((slot) => this.endSlot(slot, retiring)));
  }

  /** An expected exit: what the worker had in flight fails with `reason`, and it is not replaced. */
  private async endSlot(slot: WorkerSlot, reason: EngineError): Promise<void> {
    slot.expectedExit = true;
    this.failInFlight(slot, reason);
    await endWorker(slot.worker, { release: true, exitCode: 0 });
  }

  private startSlot(index: number): WorkerSlot {
    const slot: WorkerSlot = { index, worker: launchInferenceWorker(), inFlight: new Map(), expectedExit: false, alive: true, crashesWithoutAnswer: 0, generation: 0 };
    this.attach(slot);
    return slot;
  }

  private attach(slot: WorkerSlot): void {
    const worker = slot.worker;
    worker.on('message', (response: WorkerResponse) => {
      slot.crashesWithoutAnswer = 0;
      const pending = slot.inFlight.get(response.requestId);
      if (!pending) return;
      slot.inFlight.delete(response.requestId);
      if (response.type === 'failed') pending.reject(new Error(response.message));
      else pending.resolve(response);
    });
    worker.on('error', (error) => this.logger.warn(`Inference worker ${slot.index} failed: ${error.message}`));
    worker.on('exit', (code) => {
      // A late exit of a worker that was already replaced concerns nobody.
      if (slot.worker !== worker) return;
      if (slot.expectedExit || this.closed) return;
      slot.alive = false;
      this.failInFlight(slot, new EngineError(RUNTIME_ENGINE, 'inference_failed', `inference worker ${slot.index} exited (code ${code}) with runs in flight`, true));
      this.scheduleReplacement(slot);
    });
  }

  /**
   * At once after a crash; a worker that keeps dying before answering anything (a broken
   * install, a model that crashes onnxruntime on load) is restarted with a growing pause
   * (0.1 s doubling to 30 s) instead of in a tight loop.
   */
  private scheduleReplacement(slot: WorkerSlot): void {
    const crashes = ++slot.crashesWithoutAnswer;
    const delayMs = crashes <= 1 ? 0 : Math.min(MAX_RESTART_DELAY_MS, 100 * 2 ** (crashes - 2));
    this.logger.warn(
      `Inference worker ${slot.index} exited unexpectedly; starting a replacement${delayMs > 0 ? ` in ${delayMs} ms (crash ${crashes} in a row)` : ''} and reloading ${this.loads.length} model(s)`,
    );
    if (delayMs === 0) {
      this.replace(slot);
      return;
    }
    const timer = setTimeout(() => {
      if (!this.closed) this.replace(slot);
    }, delayMs);
    timer.unref();
  }

  private replace(slot: WorkerSlot): void {
    slot.worker = launchInferenceWorker();
    slot.generation += 1;
    slot.alive = true;
    this.attach(slot);
    for (const load of this.loads) {
      // Posted before any run can be, and the worker handles messages in order.
      this.send(slot, { type: 'load', ...load }).catch((error: unknown) =>
        this.logger.warn(`Replacement inference worker ${slot.index} could not load ${load.modelKey}: ${error instanceof Error ? error.message : String(error)}`),
      );
    }
  }

  private failInFlight(slot: WorkerSlot, error: EngineError): void {
    const pending = [...slot.inFlight.values()];
    slot.inFlight.clear();
    for (const request of pending) request.reject(error);
  }

  private leastBusySlot(): WorkerSlot | undefined {
    // Rotate the starting point so equal loads alternate between workers.
    const count = this.slots.length;
    let best: WorkerSlot | undefined;
    for (let offset = 0; offset < count; offset++) {
      const candidate = this.slots[(this.nextSlot + offset) % count]!;
      if (candidate.alive && (!best || candidate.inFlight.size < best.inFlight.size)) best = candidate;
    }
    if (best) this.nextSlot = (best.index + 1) % count;
    return best;
  }

  private send(slot: WorkerSlot, request: UnnumberedRequest, transfer: ArrayBuffer[] = []): Promise<WorkerResponse> {
    if (this.closed) return Promise.reject(new EngineError(RUNTIME_ENGINE, 'cancelled', 'inference runtime closed', false));
    const requestId = this.nextRequestId++;
    return new Promise<WorkerResponse>((resolve, reject) => {
      slot.inFlight.set(requestId, { resolve, reject });
      slot.worker.postMessage({ ...request, requestId }, transfer);
    });
  }
}

function unexpected(response: WorkerResponse): Error {
  return new Error(`unexpected inference worker response '${response.type}'`);
}

/** Past this, a worker that has not exited after an `exit` request is terminated anyway (a stuck native run). */
const WORKER_EXIT_TIMEOUT_MS = 10_000;

/**
 * Asks a worker to end itself once no onnxruntime run is in flight (see the `exit` request), and
 * waits for it. Terminating it mid-run instead aborts the whole process.
 */
async function endWorker(worker: Worker, options: { release: boolean; exitCode: number }): Promise<void> {
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  try {
    worker.postMessage({ type: 'exit', requestId: -1, ...options } satisfies WorkerRequest);
  } catch {
    return; // already gone
  }
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), WORKER_EXIT_TIMEOUT_MS);
  });
  const outcome = await Promise.race([exited, timedOut]);
  clearTimeout(timer);
  if (outcome === 'timeout') await worker.terminate();
}
