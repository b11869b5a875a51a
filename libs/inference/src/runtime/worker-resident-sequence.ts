/**
 * A ModelSequence whose state lives in the inference worker that ran its first step (see
 * SequenceStore in the worker, and WorkerPool's sequence homes). This side only remembers which
 * inputs the worker holds, so each step can be checked before it is sent: an input neither fed nor
 * held fails here with a clear message rather than inside onnxruntime.
 */
import { EngineError, type ModelRunResult, type ModelSequence, type RunContext, type SequenceStepSpec, type TensorData } from '../contracts';
import { validateFeeds } from './feed-validation';
import type { SequenceStepScheduler } from './sequence-step-scheduler';
import { RUNTIME_ENGINE, type LoadedModelMetadata, type WorkerPool } from './worker-pool';

export class WorkerResidentSequence implements ModelSequence {
  private readonly held = new Set<string>();
  private steps = 0;
  private running = false;
  private closed = false;

  constructor(
    private readonly model: string,
    private readonly metadata: LoadedModelMetadata,
    private readonly scheduler: SequenceStepScheduler,
    private readonly pool: WorkerPool,
    readonly id: string,
  ) {}

  get heldInputs(): ReadonlySet<string> {
    return this.held;
  }

  async step(feeds: Record<string, TensorData>, spec: SequenceStepSpec, context?: RunContext): Promise<ModelRunResult> {
    const fail = (detail: string): never => {
      throw new EngineError(RUNTIME_ENGINE, 'bad_request', `${this.model} sequence: ${detail}`, false);
    };
    if (this.closed) fail('already closed');
    // The worker applies steps in order, but a second step sent before the first answered would
    // start from state the first has not written yet.
    if (this.running) fail('a step is still running; steps run one at a time');
    const inputNames = new Set(this.metadata.inputs.map((input) => input.name));
    const outputNames = new Set(this.metadata.outputs.map((output) => output.name));
    const carry = spec.carry ?? {};
    const retain = spec.retain ?? [];
    const discard = spec.discard ?? [];
    for (const [output, input] of Object.entries(carry)) {
      if (!outputNames.has(output)) fail(`carries unknown output '${output}'`);
      if (!inputNames.has(input)) fail(`carries '${output}' into unknown input '${input}'`);
    }
    for (const name of retain) if (!(name in feeds)) fail(`retains input '${name}', which this step does not feed`);
    for (const name of discard) if (!outputNames.has(name)) fail(`discards unknown output '${name}'`);
    const missing = this.metadata.inputs.filter((input) => !(input.name in feeds) && !this.held.has(input.name));
    if (missing.length > 0) fail(`missing input '${missing[0]!.name}' (neither fed nor held from an earlier step)`);
    validateFeeds(this.model, feeds, this.metadata.inputs.filter((input) => input.name in feeds));

    this.running = true;
    try {
      const result = await this.scheduler.submit(feeds, { id: this.id, first: this.steps === 0, carry, retain, discard }, context);
      this.steps += 1;
      // Mirrors the worker: fed-and-not-retained inputs are dropped, retained and carried ones held.
      for (const name of Object.keys(feeds)) if (!retain.includes(name)) this.held.delete(name);
      for (const name of retain) this.held.add(name);
      for (const input of Object.values(carry)) this.held.add(input);
      return result;
    } finally {
      this.running = false;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.held.clear();
    if (this.steps > 0) await this.pool.endSequence(this.id);
  }
}
