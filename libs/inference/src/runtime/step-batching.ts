/**
 * Batching the steps of different calls' sequences (decoder tokens) into one run, inside the
 * inference worker that holds their state. Pure: which steps may share a run, and how their
 * tensors are padded, joined and split; the worker (sequence-step-runner.ts) applies it.
 *
 * Two steps share a run when their merged tensors (held state + this step's feeds) agree on every
 * dim but the batch axis, and on the values of shared inputs (Whisper's `use_cache_branch`). A
 * model whose attention is masked (an LLM's `attention_mask`) may also declare left-padded inputs:
 * there sequences of different lengths join, the shorter ones padded with zeros at the start,
 * masked by the model, and their state is trimmed back to their own length after the run. That is
 * continuous batching: a call whose decode starts joins the next step of those already decoding.
 */
import type { TensorData } from '../contracts';
import { concatenate, elementCount } from './tensor-batching';

/** How a model's sequence steps batch (sent to the worker with each batch of steps). */
export interface StepBatching {
  /** Batch axis per input; an input not listed is shared: equal values are required to join. */
  inputs: Readonly<Record<string, number>>;
  /** Batch axis per output; an output not listed is posted whole to every step. */
  outputs: Readonly<Record<string, number>>;
  /**
   * Inputs whose length along the given axis may differ between sequences (KV caches along their
   * sequence axis, the attention mask along its only non-batch axis): shorter ones get zeros in
   * front. Only for models that mask those positions; empty for any other model.
   */
  leftPadded: Readonly<Record<string, number>>;
  /** Rows per run at most (1: every step runs alone). */
  maxRows: number;
}

/** A tensor as planning sees it: ort.Tensor, TensorData and a batch's rows (no data of their own) fit. */
export interface ShapedTensor {
  readonly type: string;
  readonly dims: readonly number[];
  readonly data?: unknown;
}

export interface StepGroup {
  /** Indexes of the steps run together, in the order their rows are joined. */
  steps: number[];
  /** Zeros put in front of each step's left-padded inputs (0 without padding). */
  pads: number[];
}

/** Shared inputs up to this many elements are compared by value; a larger one never batches. */
const MAX_SHARED_ELEMENTS_COMPARED = 64;
/** Padding below this many positions is always accepted: cheaper than a second run. */
const FREE_PAD_POSITIONS = 16;

/**
 * Groups steps that may run together. Steps whose tensors cannot be joined each get their own
 * group; a group never exceeds `maxRows` rows, and padding never costs more positions than the
 * group's own (rows longer than twice the shortest's length start a new group).
 */
export function planStepGroups(steps: ReadonlyArray<Readonly<Record<string, ShapedTensor>>>, batching: StepBatching): StepGroup[] {
  const buckets = new Map<string, Array<{ step: number; length: number; rows: number }>>();
  const groups: StepGroup[] = [];
  steps.forEach((tensors, step) => {
    const shape = stepShape(tensors, batching);
    if (batching.maxRows <= 1 || shape === undefined) {
      groups.push({ steps: [step], pads: [0] });
      return;
    }
    const bucket = buckets.get(shape.key);
    const entry = { step, length: shape.length, rows: shape.rows };
    if (bucket) bucket.push(entry);
    else buckets.set(shape.key, [entry]);
  });
  for (const bucket of buckets.values()) {
    // Longest first: each group's first row sets its padded length.
    bucket.sort((a, b) => b.length - a.length || a.step - b.step);
    let current: { group: StepGroup; longest: number; positions: number; rows: number } | undefined;
    for (const entry of bucket) {
      if (current && fits(current, entry, batching.maxRows)) {
        current.group.steps.push(entry.step);
        current.group.pads.push(current.longest - entry.length);
        current.positions += entry.length * entry.rows;
        current.rows += entry.rows;
        continue;
      }
      current = { group: { steps: [entry.step], pads: [0] }, longest: entry.length, positions: entry.length * entry.rows, rows: entry.rows };
      groups.push(current.group);
    }
  }
  return groups;
}

function fits(current: { longest: number; positions: number; rows: number }, entry: { length: number; rows: number }, maxRows: number): boolean {
  if (current.rows + entry.rows > maxRows) return false;
  const pad = current.longest - entry.length;
  if (pad <= FREE_PAD_POSITIONS) return true;
  const rows = current.rows + entry.rows;
  const real = current.positions + entry.length * entry.rows;
  return rows * current.longest - real <= real;
}

/**
 * The step's compatibility key (types and dims with the batch and padded axes blanked, shared
 * inputs' values, and how each padded input's length relates to the first one's), its padded
 * length and its rows; undefined when it can join nothing (a large shared input, no batched input).
 */
function stepShape(tensors: Readonly<Record<string, ShapedTensor>>, batching: StepBatching): { key: string; length: number; rows: number } | undefined {
  const names = Object.keys(tensors).sort();
  let key = '';
  let rows: number | undefined;
  let length: number | undefined;
  for (const name of names) {
    const tensor = tensors[name]!;
    const axis = batching.inputs[name];
    const padAxis = batching.leftPadded[name];
    key += `${name}:${tensor.type}:`;
    tensor.dims.forEach((dim, d) => (key += d === axis ? '*,' : d === padAxis ? '~,' : `${dim},`));
    if (axis !== undefined) {
      const size = tensor.dims[axis];
      if (size === undefined || (rows !== undefined && size !== rows)) return undefined;
      rows = size;
    } else {
      const values = tensor.data as ArrayLike<unknown> | undefined;
      if (!values || typeof values.length !== 'number' || values.length > MAX_SHARED_ELEMENTS_COMPARED) return undefined;
      key += '=';
      for (let i = 0; i < values.length; i++) key += `${String(values[i])},`;
    }
    if (padAxis !== undefined) {
      const size = tensor.dims[padAxis];
      if (size === undefined) return undefined;
      // The first padded input's length is the step's; the others must keep their offset to it.
      if (length === undefined) length = size;
      key += `~${size - length}`;
    }
    key += '|';
  }
  if (rows === undefined || rows < 1) return undefined;
  return { key, length: length ?? 0, rows };
}

/** A copy of `tensor` with `count` zeros in front along `axis`. */
export function padStart(tensor: TensorData, axis: number, count: number): TensorData {
  if (count === 0) return tensor;
  const dims = [...tensor.dims];
  dims[axis] = count;
  const Zeros = tensor.data.constructor as new (length: number) => TensorData['data'];
  return concatenate([{ type: tensor.type, data: new Zeros(elementCount(dims)), dims }, tensor], axis);
}

/** The steps' tensors for one input joined along the batch axis, each padded first where declared. */
export function joinStepInputs(parts: readonly TensorData[], axis: number, padAxis: number | undefined, pads: readonly number[]): TensorData {
  const padded = padAxis === undefined ? parts : parts.map((part, index) => padStart(part, padAxis, pads[index] ?? 0));
  return concatenate(padded, axis);
}
