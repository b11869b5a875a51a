import type { InferenceDevice, ModelHandle, ModelLoadSpec, ModelRunResult, ModelSequence, RunContext, TensorData } from '../contracts';
import { BatchScheduler, type BatchSchedulerConfig } from './batch-scheduler';
import { validateFeeds } from './feed-validation';
import { SequenceStepScheduler } from './sequence-step-scheduler';
import type { StepBatching } from './step-batching';
import type { ResolvedBatchAxes } from './tensor-batching';
import type { LoadedModelMetadata, WorkerPool } from './worker-pool';
import { WorkerResidentSequence } from './worker-resident-sequence';

let sequenceCount = 0;

/** A loaded model: validates each request, then hands it to the model's batch scheduler. */
export class OnnxModelHandle implements ModelHandle {
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  private readonly scheduler: BatchScheduler;
  private readonly steps: SequenceStepScheduler;
  private readonly pool: WorkerPool;

  constructor(
    readonly name: string,
    readonly device: InferenceDevice,
    readonly metadata: LoadedModelMetadata,
    schedulerConfig: BatchSchedulerConfig,
    stepBatching: StepBatching,
  ) {
    this.pool = schedulerConfig.pool;
    this.inputNames = metadata.inputs.map((input) => input.name);
    this.outputNames = metadata.outputs.map((output) => output.name);
    this.scheduler = new BatchScheduler(schedulerConfig);
    const { model, pool, usageSink, onBatch } = schedulerConfig;
    this.steps = new SequenceStepScheduler({ model, device, batching: stepBatching, pool, usageSink, onBatch });
  }

  async run(feeds: Record<string, TensorData>, context?: RunContext): Promise<ModelRunResult> {
    validateFeeds(this.name, feeds, this.metadata.inputs);
    return this.scheduler.submit(feeds, context);
  }

  openSequence(): ModelSequence {
    return new WorkerResidentSequence(this.name, this.metadata, this.steps, this.pool, `${this.name}#${++sequenceCount}`);
  }

  /** Sends whatever is still gathering, without waiting for the batch delay. */
  flush(): void {
    this.scheduler.flushAll();
  }
}

/** The spec's batch axes, checked against the model; absent: axis 0 for every input and output. */
export function resolveBatchAxes(spec: ModelLoadSpec, metadata: LoadedModelMetadata): ResolvedBatchAxes {
  if (!spec.batchAxes) {
    return {
      inputs: new Map(metadata.inputs.map((input) => [input.name, 0])),
      outputs: new Map(metadata.outputs.map((output) => [output.name, 0])),
    };
  }
  const check = (kind: 'input' | 'output', axes: Record<string, number>, known: LoadedModelMetadata['inputs']): Map<string, number> => {
    const resolved = new Map<string, number>();
    for (const [name, axis] of Object.entries(axes)) {
      const entry = known.find((candidate) => candidate.name === name);
      if (!entry) throw new RangeError(`${spec.name}: batchAxes names ${kind} '${name}', which the model does not have`);
      if (!Number.isInteger(axis) || axis < 0 || axis >= entry.shape.length) {
        throw new RangeError(`${spec.name}: batch axis ${axis} of ${kind} '${name}' is outside its ${entry.shape.length} dims`);
      }
      resolved.set(name, axis);
    }
    return resolved;
  };
  const inputs = check('input', spec.batchAxes.inputs, metadata.inputs);
  if (inputs.size === 0) throw new RangeError(`${spec.name}: batchAxes must batch at least one input`);
  return { inputs, outputs: check('output', spec.batchAxes.outputs, metadata.outputs) };
}

/**
 * How the model's sequence steps batch across calls: only when its spec asks (its batch axes then
 * say which inputs are shared), else every step runs alone.
 */
export function resolveStepBatching(spec: ModelLoadSpec, axes: ResolvedBatchAxes, metadata: LoadedModelMetadata): StepBatching {
  const inputs = Object.fromEntries(axes.inputs);
  const outputs = Object.fromEntries(axes.outputs);
  const batching = spec.sequenceBatching;
  if (!batching) return { inputs, outputs, leftPadded: {}, maxRows: 1 };
  if (!spec.batchAxes) throw new RangeError(`${spec.name}: sequenceBatching needs batchAxes (which inputs are shared by a batch)`);
  if (!Number.isInteger(batching.maxRows) || batching.maxRows < 1) throw new RangeError(`${spec.name}: sequenceBatching.maxRows must be a positive integer, got ${batching.maxRows}`);
  const leftPadded = batching.leftPadded ?? {};
  for (const [name, axis] of Object.entries(leftPadded)) {
    const input = metadata.inputs.find((candidate) => candidate.name === name);
    if (!input) throw new RangeError(`${spec.name}: sequenceBatching pads input '${name}', which the model does not have`);
    if (!Number.isInteger(axis) || axis < 0 || axis >= input.shape.length || axis === inputs[name]) {
      throw new RangeError(`${spec.name}: padding axis ${axis} of input '${name}' must be one of its ${input.shape.length} dims other than the batch axis`);
    }
  }
  return { inputs, outputs, leftPadded: { ...leftPadded }, maxRows: batching.maxRows };
}
