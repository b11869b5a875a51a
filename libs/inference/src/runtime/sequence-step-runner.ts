/**
 * Runs a batch of sequence steps (decoder tokens of several calls) inside the inference worker
 * that holds their state: each step's held tensors and feeds are merged, the steps that can share
 * a run are joined along the batch axis (step-batching.ts), each group runs once, and what each
 * step carries is split back into its own sequence's state. Outputs of one step never reach
 * another: rows are sliced out before they are kept or posted.
 *
 * Steps of a sequence whose state is lost fail alone; a group whose run fails is re-run one step
 * at a time, so one bad step fails only itself.
 */
import { performance } from 'node:perf_hooks';
import type * as ort from 'onnxruntime-node';
import type { TensorData } from '../contracts';
import { BatchRowView, materialized, wholeBatchOf, type HeldTensor } from './batch-row-view';
import { asTensorData, toOrtTensor } from './ort-tensor-data';
import type { SequenceStore } from './sequence-store';
import { joinStepInputs, planStepGroups, type StepBatching, type StepGroup } from './step-batching';
import { copyTensor, sliceRows } from './tensor-batching';
import type { SequenceStep } from './worker-protocol';

export interface StepRequest {
  feeds: Record<string, TensorData>;
  sequence: SequenceStep;
}

export type StepOutcome = { outputs: Record<string, TensorData> } | { error: string };

/** One run: which steps it carried, its rows and its time (for accounting and the capacity estimate). */
export interface StepRunRecord {
  steps: number[];
  /** Rows of each step, in the order of `steps`. */
  stepRows: number[];
  runMs: number;
}

type OrtFeeds = Record<string, ort.Tensor>;
type HeldFeeds = Record<string, HeldTensor>;

interface JoinedInput {
  parts: HeldTensor[];
  pads: number[];
  joined: ort.Tensor;
}

export class SequenceStepRunner {
  /**
   * Inputs joined for the previous batch of steps, kept while the same held tensors join again:
   * state fed once and never replaced (Whisper's encoder states and cross-attention keys, 37 MB
   * per whisper-base call) is then joined once per group, not once per token.
   */
  private joinedInputs = new Map<string, JoinedInput[]>();

  constructor(private readonly store: SequenceStore) {}

  async run(
    modelKey: string,
    session: { run(feeds: OrtFeeds): Promise<OrtFeeds> },
    steps: readonly StepRequest[],
    batching: StepBatching,
  ): Promise<{ outcomes: StepOutcome[]; runs: StepRunRecord[] }> {
    const outcomes: StepOutcome[] = new Array(steps.length);
    const runs: StepRunRecord[] = [];
    const merged: Array<HeldFeeds | undefined> = steps.map((step, index) => {
      try {
        // A sequence's held tensors first, this step's feeds over them.
        const feeds: HeldFeeds = { ...this.store.begin(step.sequence.id, modelKey, step.sequence.first) };
        for (const [name, tensor] of Object.entries(step.feeds)) feeds[name] = toOrtTensor(tensor);
        return feeds;
      } catch (error) {
        outcomes[index] = { error: messageOf(error) };
        return undefined;
      }
    });
    const runnable = merged.flatMap((feeds, index) => (feeds ? [index] : []));
    const groups = planStepGroups(
      runnable.map((index) => merged[index]!),
      batching,
    ).map((group) => inBatchOrder({ steps: group.steps.map((position) => runnable[position]!), pads: group.pads }, merged));

    const joinedNow = new Map<string, JoinedInput[]>();
    const runGroup = async (group: StepGroup): Promise<void> => {
      const feeds = group.steps.map((index) => merged[index]!);
      let results: OrtFeeds;
      let runMs: number;
      try {
        const joined = group.steps.length === 1 ? materializedFeeds(feeds[0]!) : this.join(feeds, group.pads, batching, joinedNow);
        const startedAt = performance.now();
        results = await session.run(joined);
        runMs = performance.now() - startedAt;
      } catch (error) {
        if (group.steps.length > 1) {
          for (const index of group.steps) await runGroup({ steps: [index], pads: [0] });
          return;
        }
        outcomes[group.steps[0]!] = { error: messageOf(error) };
        return;
      }
      const rowCounts = feeds.map((stepFeeds) => rowsOf(stepFeeds, batching));
      runs.push({ steps: group.steps, stepRows: rowCounts, runMs });
      let rowStart = 0;
      group.steps.forEach((index, position) => {
        const rows = rowCounts[position]!;
        try {
          outcomes[index] = { outputs: this.finishStep(modelKey, steps[index]!, feeds[position]!, results, group.steps.length > 1 ? { rowStart, rows, pad: group.pads[position]! } : undefined, batching) };
        } catch (error) {
          outcomes[index] = { error: messageOf(error) };
        }
        rowStart += rows;
      });
    };
    for (const group of groups) await runGroup(group);
    this.joinedInputs = joinedNow;
    return { outcomes, runs };
  }

  /** Joins each input across the group's steps (shared inputs are the first step's). */
  private join(feeds: readonly HeldFeeds[], pads: readonly number[], batching: StepBatching, joinedNow: Map<string, JoinedInput[]>): OrtFeeds {
    const joined: OrtFeeds = {};
    for (const name of Object.keys(feeds[0]!)) {
      const axis = batching.inputs[name];
      const parts = feeds.map((stepFeeds) => stepFeeds[name]!);
      if (axis === undefined) {
        joined[name] = materialized(parts[0]!);
        continue;
      }
      // The same group again: its carried state is still the batch the last run produced.
      const whole = wholeBatchOf(parts, pads);
      if (whole) {
        joined[name] = whole;
        continue;
      }
      const earlier = [...(this.joinedInputs.get(name) ?? []), ...(joinedNow.get(name) ?? [])].find(
        (entry) => entry.parts.length === parts.length && entry.parts.every((part, index) => part === parts[index] && entry.pads[index] === pads[index]),
      );
      const entry = earlier ?? { parts, pads: [...pads], joined: toOrtTensor(joinStepInputs(parts.map((part) => asTensorData(materialized(part))), axis, batching.leftPadded[name], pads)) };
      const kept = joinedNow.get(name);
      if (kept) {
        if (!kept.includes(entry)) kept.push(entry);
      } else joinedNow.set(name, [entry]);
      joined[name] = entry.joined;
    }
    return joined;
  }

  /**
   * Keeps what the step's sequence carries (its rows of the carried outputs, as views of the batch
   * that know their padding) and returns its rows of the outputs it wants. `slice` is absent for a
   * step that ran alone.
   */
  private finishStep(
    modelKey: string,
    step: StepRequest,
    feeds: HeldFeeds,
    results: OrtFeeds,
    slice: { rowStart: number; rows: number; pad: number } | undefined,
    batching: StepBatching,
  ): Record<string, TensorData> {
    const { sequence } = step;
    const own = (name: string, tensor: ort.Tensor): TensorData => {
      const data = asTensorData(tensor, `output ${name}`);
      if (!slice) return data;
      const axis = batching.outputs[name];
      return axis === undefined ? copyTensor(data) : sliceRows(data, axis, slice.rowStart, slice.rows);
    };
    const held: HeldFeeds = {};
    // What the sequence held and this step did not replace stays (e.g. cross-attention keys).
    for (const [name, tensor] of Object.entries(feeds)) if (!(name in step.feeds) || sequence.retain.includes(name)) held[name] = tensor;
    for (const [output, input] of Object.entries(sequence.carry)) {
      const tensor = results[output];
      if (!tensor) throw new Error(`sequence carries output '${output}', which model ${modelKey} did not return`);
      if (!slice) {
        held[input] = tensor;
        continue;
      }
      const axis = batching.outputs[output];
      const padAxis = batching.leftPadded[input];
      held[input] = axis === undefined ? toOrtTensor(copyTensor(asTensorData(tensor))) : new BatchRowView(tensor, axis, slice.rowStart, slice.rows, padAxis, padAxis === undefined ? 0 : slice.pad);
    }
    this.store.keep(sequence.id, modelKey, held);
    const outputs: Record<string, TensorData> = {};
    for (const [name, tensor] of Object.entries(results)) {
      if (!(name in sequence.carry) && !sequence.discard.includes(name)) outputs[name] = own(name, tensor);
    }
    return outputs;
  }
}

function rowsOf(feeds: HeldFeeds, batching: StepBatching): number {
  for (const [name, axis] of Object.entries(batching.inputs)) {
    const size = feeds[name]?.dims[axis];
    if (size !== undefined) return size;
  }
  return 1;
}

/** A group whose steps all hold rows of one batch runs them in that batch's row order, so it can be fed again as it is. */
function inBatchOrder(group: StepGroup, merged: ReadonlyArray<HeldFeeds | undefined>): StepGroup {
  if (group.steps.length < 2) return group;
  const first = merged[group.steps[0]!]!;
  const name = Object.keys(first).find((input) => first[input] instanceof BatchRowView);
  if (!name) return group;
  const views = group.steps.map((index) => merged[index]![name]);
  const batch = (views[0] as BatchRowView).batch;
  if (!views.every((view) => view instanceof BatchRowView && view.batch === batch)) return group;
  const order = group.steps.map((_, position) => position).sort((a, b) => (views[a] as BatchRowView).rowStart - (views[b] as BatchRowView).rowStart);
  return { steps: order.map((position) => group.steps[position]!), pads: order.map((position) => group.pads[position]!) };
}

function materializedFeeds(feeds: HeldFeeds): OrtFeeds {
  const own: OrtFeeds = {};
  for (const [name, tensor] of Object.entries(feeds)) own[name] = materialized(tensor);
  return own;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
