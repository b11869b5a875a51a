/**
 * One sequence's rows of a tensor a joined run produced (its share of a batched KV cache), kept
 * as a view rather than copied out. While the same sequences keep running together, their next
 * step is fed the whole batch tensor as it is: no join before the run and no split after it,
 * which on a CPU cost more than the batching saved (an LLM step copied its 7 MB cache per call
 * twice per token). The rows are copied out only when the group changes (a call finishes or
 * joins) or the sequence runs alone.
 */
import type * as ort from 'onnxruntime-node';
import { asTensorData, toOrtTensor } from './ort-tensor-data';
import { sliceRows } from './tensor-batching';

export class BatchRowView {
  /** The rows' own dims: the batch's, with its rows on the batch axis and its padding left out. */
  readonly dims: readonly number[];

  constructor(
    readonly batch: ort.Tensor,
    readonly batchAxis: number,
    readonly rowStart: number,
    readonly rows: number,
    /** Zeros in front along `padAxis` that this sequence does not own (none: 0). */
    readonly padAxis: number | undefined,
    readonly pad: number,
  ) {
    const dims = [...batch.dims];
    dims[batchAxis] = rows;
    if (padAxis !== undefined) dims[padAxis] = dims[padAxis]! - pad;
    this.dims = dims;
  }

  get type(): ort.Tensor.Type {
    return this.batch.type;
  }

  /** A copy of the rows, without the padding, as a tensor of their own. */
  materialize(): ort.Tensor {
    let own = sliceRows(asTensorData(this.batch), this.batchAxis, this.rowStart, this.rows);
    if (this.padAxis !== undefined && this.pad > 0) own = sliceRows(own, this.padAxis, this.pad, own.dims[this.padAxis]! - this.pad);
    return toOrtTensor(own);
  }
}

/** What a worker holds for a sequence between steps: a tensor of its own, or its rows of a batch. */
export type HeldTensor = ort.Tensor | BatchRowView;

export function materialized(tensor: HeldTensor): ort.Tensor {
  return tensor instanceof BatchRowView ? tensor.materialize() : tensor;
}

/**
 * The batch tensor itself when `parts` are, in order, all of its rows with the padding `pads`
 * calls for (the same group running again); undefined otherwise.
 */
export function wholeBatchOf(parts: readonly HeldTensor[], pads: readonly number[]): ort.Tensor | undefined {
  const first = parts[0];
  if (!(first instanceof BatchRowView)) return undefined;
  let rowStart = 0;
  for (const [index, part] of parts.entries()) {
    if (!(part instanceof BatchRowView) || part.batch !== first.batch || part.rowStart !== rowStart || part.pad !== pads[index]) return undefined;
    rowStart += part.rows;
  }
  return rowStart === first.batch.dims[first.batchAxis] ? first.batch : undefined;
}
