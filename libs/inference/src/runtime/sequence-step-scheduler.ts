/**
 * Continuous batching of sequence steps (decoder tokens) for one model. Each sequence lives on
 * the worker that ran its first step, so steps queue per worker ("lane"). A lane sends everything
 * queued as one request and, while that request runs, gathers what arrives: the next tokens of
 * the calls it just answered (submitted as soon as their logits are read) and the first steps of
 * calls that started decoding meanwhile. The worker joins the steps that can share a run (see
 * step-batching.ts), so N calls decoding together cost about one run per token, not N.
 *
 * A lane never holds a step back for company: a step submitted to an idle lane is sent on the
 * next turn of the event loop, with whatever else was submitted in the same turn.
 *
 * Accounting: each run's measured time is charged to its steps in proportion to their rows.
 */
import { performance } from 'node:perf_hooks';
import { EngineError, type ComputeUsageSink, type InferenceDevice, type ModelRunResult, type RunContext, type TensorData } from '../contracts';
import { cancelled, runFailure } from './batch-scheduler';
import type { BatchRecord } from './inference-runtime-options';
import type { StepOutcome, StepRunRecord } from './sequence-step-runner';
import type { StepBatching } from './step-batching';
import { copyTensor } from './tensor-batching';
import type { WorkerPool } from './worker-pool';
import type { SequenceStep } from './worker-protocol';

export interface SequenceStepSchedulerConfig {
  model: string;
  device: InferenceDevice;
  batching: StepBatching;
  pool: WorkerPool;
  usageSink?: ComputeUsageSink;
  onBatch?: (batch: BatchRecord) => void;
}

/** Steps per request to a worker at most: bounds one message; the rest go in the next one. */
const MAX_STEPS_PER_REQUEST = 256;

interface QueuedStep {
  readonly feeds: Record<string, TensorData>;
  readonly sequence: SequenceStep;
  readonly callId: string | undefined;
  readonly enqueuedAt: number;
  readonly resolve: (result: ModelRunResult) => void;
  readonly reject: (error: Error) => void;
}

interface Lane {
  readonly worker: number;
  readonly queue: QueuedStep[];
  /** A request of this lane is at the worker: what arrives waits for it and goes next. */
  running: boolean;
  /** A send is due on the next turn of the event loop. */
  scheduled: boolean;
}

export class SequenceStepScheduler {
  private readonly lanes = new Map<number, Lane>();

  constructor(private readonly config: SequenceStepSchedulerConfig) {}

  /**
   * Queues one step on its sequence's worker. Once queued it runs (one token of work); a signal
   * aborted before submission refuses it, as the sequence's state must not advance unseen.
   */
  submit(feeds: Record<string, TensorData>, sequence: SequenceStep, context: RunContext = {}): Promise<ModelRunResult> {
    if (context.signal?.aborted) return Promise.reject(cancelled(this.config.model));
    let worker: number;
    try {
      worker = this.config.pool.sequenceWorker(sequence);
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    let lane = this.lanes.get(worker);
    if (!lane) {
      lane = { worker, queue: [], running: false, scheduled: false };
      this.lanes.set(worker, lane);
    }
    // A private copy: its buffers are transferred to the worker, the caller's are not.
    const ownFeeds: Record<string, TensorData> = {};
    for (const [name, tensor] of Object.entries(feeds)) ownFeeds[name] = copyTensor(tensor);
    const queuedLane = lane;
    return new Promise<ModelRunResult>((resolve, reject) => {
      queuedLane.queue.push({ feeds: ownFeeds, sequence, callId: context.callId, enqueuedAt: performance.now(), resolve, reject });
      this.schedule(queuedLane);
    });
  }

  private schedule(lane: Lane): void {
    if (lane.running || lane.scheduled) return;
    lane.scheduled = true;
    // The next turn, not now: the other calls whose logits arrived in the same message submit
    // their next tokens in this turn's microtasks, and join this request.
    setImmediate(() => {
      lane.scheduled = false;
      void this.send(lane);
    });
  }

  private async send(lane: Lane): Promise<void> {
    if (lane.running || lane.queue.length === 0) return;
    const steps = lane.queue.splice(0, MAX_STEPS_PER_REQUEST);
    lane.running = true;
    const sentAt = performance.now();
    try {
      const { outcomes, runs } = await this.config.pool.runSteps(
        lane.worker,
        this.config.model,
        steps.map((step) => ({ feeds: step.feeds, sequence: step.sequence })),
        this.config.batching,
      );
      this.settle(steps, outcomes, runs, sentAt);
    } catch (error) {
      const failure = error instanceof EngineError ? error : runFailure(this.config.model, error);
      for (const step of steps) step.reject(failure);
    } finally {
      lane.running = false;
      if (lane.queue.length > 0) this.schedule(lane);
    }
  }

  private settle(steps: readonly QueuedStep[], outcomes: readonly StepOutcome[], runs: readonly StepRunRecord[], sentAt: number): void {
    const { model, device, usageSink, onBatch } = this.config;
    const doneAt = performance.now();
    const answered = new Set<number>();
    for (const run of runs) {
      const batchRows = run.stepRows.reduce((sum, rows) => sum + rows, 0);
      const queueWaitsMs: number[] = [];
      run.steps.forEach((index, position) => {
        const step = steps[index]!;
        const outcome = outcomes[index];
        const rows = run.stepRows[position]!;
        if (step.callId !== undefined) usageSink?.record({ callId: step.callId, model, device, seconds: (run.runMs / 1000) * (rows / batchRows), rows, batchRows });
        const queueWaitMs = Math.max(0, doneAt - step.enqueuedAt - run.runMs);
        queueWaitsMs.push(queueWaitMs);
        if (outcome && 'outputs' in outcome) {
          answered.add(index);
          step.resolve({ outputs: outcome.outputs, queueWaitMs, runMs: run.runMs });
        }
      });
      const firstEnqueuedAt = Math.min(...run.steps.map((index) => steps[index]!.enqueuedAt));
      onBatch?.({ model, device, requests: run.steps.length, rows: batchRows, gatherMs: Math.max(0, sentAt - firstEnqueuedAt), queueWaitsMs, runMs: run.runMs });
    }
    steps.forEach((step, index) => {
      if (answered.has(index)) return;
      const outcome = outcomes[index];
      const message = outcome && 'error' in outcome ? outcome.error : 'the inference worker returned no result for this step';
      step.reject(runFailure(model, new Error(message)));
    });
  }
}
