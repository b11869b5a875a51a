/**
 * Joining requests into one batch tensor along the batch axis and splitting results back.
 * The batch axis need not be 0 (Silero's state is [2, B, 128]): rows are copied in runs of
 * `inner` elements for each index of the axes before it.
 */
import type { TensorData } from '../contracts';

/** Batch axis per input/output name; inputs without one are shared by the whole batch. */
export interface ResolvedBatchAxes {
  inputs: ReadonlyMap<string, number>;
  outputs: ReadonlyMap<string, number>;
}

/** Shared inputs up to this many elements are compared by value; larger ones never batch. */
const MAX_SHARED_ELEMENTS_COMPARED = 64;
let uniqueKeyCounter = 0;

export function elementCount(dims: readonly number[]): number {
  let count = 1;
  for (const dim of dims) count *= dim;
  return count;
}

/** Rows of a request: the batch-axis size, which every batched input must agree on. */
export function batchRowsOf(feeds: Record<string, TensorData>, axes: ResolvedBatchAxes): number {
  let rows: number | undefined;
  for (const [name, axis] of axes.inputs) {
    const tensor = feeds[name];
    if (!tensor) continue;
    const size = tensor.dims[axis];
    if (size === undefined) throw new RangeError(`input ${name} has ${tensor.dims.length} dims; its batch axis is ${axis}`);
    if (rows !== undefined && size !== rows) throw new RangeError(`batched inputs disagree on rows: ${name} has ${size}, another has ${rows}`);
    rows = size;
  }
  if (rows === undefined || rows < 1) throw new RangeError('a request needs at least one row on its batched inputs');
  return rows;
}

/**
 * Requests may share a batch only when their key is equal: same types and non-batch dims on
 * batched inputs, same values on shared inputs (Silero's `sr`). Built on every request, so plain
 * string concatenation in the model's input order (no sorting, no intermediate arrays).
 */
export function compatibilityKey(feeds: Record<string, TensorData>, axes: ResolvedBatchAxes, inputNames: readonly string[]): string {
  let key = '';
  for (const name of inputNames) {
    const tensor = feeds[name];
    if (!tensor) continue;
    const axis = axes.inputs.get(name);
    key += `${name}:${tensor.type}:`;
    for (let d = 0; d < tensor.dims.length; d++) key += d === axis ? '*,' : `${tensor.dims[d]},`;
    if (axis !== undefined) key += '|';
    else if (tensor.data.length > MAX_SHARED_ELEMENTS_COMPARED) key += `unique#${++uniqueKeyCounter}|`;
    else {
      key += '=';
      for (let i = 0; i < tensor.data.length; i++) key += `${tensor.data[i]},`;
      key += '|';
    }
  }
  return key;
}

/** Joins tensors along `axis` into a new tensor (the inputs are only read). */
export function concatenate(tensors: readonly TensorData[], axis: number): TensorData {
  const first = tensors[0];
  if (!first) throw new RangeError('nothing to concatenate');
  const outer = elementCount(first.dims.slice(0, axis));
  const inner = elementCount(first.dims.slice(axis + 1));
  let totalRows = 0;
  for (const tensor of tensors) totalRows += tensor.dims[axis]!;
  const data = allocateLike(first.data, outer * totalRows * inner);
  let rowOffset = 0;
  for (const tensor of tensors) {
    const rows = tensor.dims[axis]!;
    const runLength = rows * inner;
    for (let o = 0; o < outer; o++) {
      copyRun(tensor.data, o * runLength, data, (o * totalRows + rowOffset) * inner, runLength);
    }
    rowOffset += rows;
  }
  const dims = [...first.dims];
  dims[axis] = totalRows;
  return { type: first.type, data, dims };
}

/** Copies rows [rowStart, rowStart + rowCount) of `axis` into a new tensor. */
export function sliceRows(tensor: TensorData, axis: number, rowStart: number, rowCount: number): TensorData {
  const totalRows = tensor.dims[axis];
  if (totalRows === undefined || rowStart + rowCount > totalRows) {
    throw new RangeError(`output has ${totalRows ?? 0} rows on axis ${axis}; asked for ${rowStart}..${rowStart + rowCount}`);
  }
  const outer = elementCount(tensor.dims.slice(0, axis));
  const inner = elementCount(tensor.dims.slice(axis + 1));
  const runLength = rowCount * inner;
  const data = allocateLike(tensor.data, outer * runLength);
  for (let o = 0; o < outer; o++) {
    copyRun(tensor.data, (o * totalRows + rowStart) * inner, data, o * runLength, runLength);
  }
  const dims = [...tensor.dims];
  dims[axis] = rowCount;
  return { type: tensor.type, data, dims };
}

/** A private copy: what a single-request batch sends, so the caller's arrays stay usable. */
export function copyTensor(tensor: TensorData): TensorData {
  const data = allocateLike(tensor.data, tensor.data.length);
  copyRun(tensor.data, 0, data, 0, tensor.data.length);
  return { type: tensor.type, data, dims: [...tensor.dims] };
}

function allocateLike<T extends TensorData['data']>(like: T, length: number): T {
  const constructor = like.constructor as new (length: number) => T;
  return new constructor(length);
}

function copyRun(source: TensorData['data'], sourceStart: number, target: TensorData['data'], targetStart: number, length: number): void {
  // Same constructor on both sides (allocateLike), so set() is a plain memcpy.
  (target as Float32Array).set((source as Float32Array).subarray(sourceStart, sourceStart + length), targetStart);
}
