import type { TensorData } from '../contracts';
import { batchRowsOf, compatibilityKey, concatenate, sliceRows, type ResolvedBatchAxes } from './tensor-batching';

/** A [2, rows, 3] tensor whose values encode (outer, row, inner), so misplaced copies show. */
function stateLike(rows: number, rowBase: number): TensorData {
  const data = new Float32Array(2 * rows * 3);
  for (let o = 0; o < 2; o++) for (let r = 0; r < rows; r++) for (let i = 0; i < 3; i++) data[(o * rows + r) * 3 + i] = o * 1000 + (rowBase + r) * 10 + i;
  return { type: 'float32', data, dims: [2, rows, 3] };
}

const sileroAxes: ResolvedBatchAxes = {
  inputs: new Map([
    ['input', 0],
    ['state', 1],
  ]),
  outputs: new Map([
    ['output', 0],
    ['stateN', 1],
  ]),
};

describe('tensor batching', () => {
  it('joins along a middle axis with every (outer, row) run in place, and slices back the same rows', () => {
    const a = stateLike(1, 0);
    const b = stateLike(2, 1);
    const c = stateLike(1, 3);
    const joined = concatenate([a, b, c], 1);
    expect(joined.dims).toEqual([2, 4, 3]);
    expect(Array.from(joined.data as Float32Array)).toEqual(Array.from(stateLike(4, 0).data as Float32Array));
    expect(sliceRows(joined, 1, 0, 1)).toEqual(a);
    expect(sliceRows(joined, 1, 1, 2)).toEqual(b);
    expect(sliceRows(joined, 1, 3, 1)).toEqual(c);
  });

  it('joins along axis 0 and keeps the element type (int64 stays BigInt64Array)', () => {
    const joined = concatenate(
      [
        { type: 'int64', data: BigInt64Array.of(1n, 2n), dims: [1, 2] },
        { type: 'int64', data: BigInt64Array.of(3n, 4n, 5n, 6n), dims: [2, 2] },
      ],
      0,
    );
    expect(joined.data).toBeInstanceOf(BigInt64Array);
    expect(Array.from(joined.data as BigInt64Array)).toEqual([1n, 2n, 3n, 4n, 5n, 6n]);
    expect(joined.dims).toEqual([3, 2]);
  });

  it('counts rows on the batch axis and refuses batched inputs that disagree', () => {
    const feeds = { input: { type: 'float32' as const, data: new Float32Array(2 * 288), dims: [2, 288] }, state: stateLike(2, 0) };
    expect(batchRowsOf(feeds, sileroAxes)).toBe(2);
    expect(() => batchRowsOf({ ...feeds, state: stateLike(3, 0) }, sileroAxes)).toThrow(/disagree/);
  });

  it('lets requests share a batch only with equal shapes apart from the batch axis and equal shared inputs', () => {
    const request = (rows: number, length: number, sampleRate: bigint): Record<string, TensorData> => ({
      input: { type: 'float32', data: new Float32Array(rows * length), dims: [rows, length] },
      state: stateLike(rows, 0),
      sr: { type: 'int64', data: BigInt64Array.of(sampleRate), dims: [] },
    });
    const names = ['input', 'state', 'sr'];
    const key = compatibilityKey(request(1, 288, 8000n), sileroAxes, names);
    expect(compatibilityKey(request(3, 288, 8000n), sileroAxes, names)).toBe(key);
    expect(compatibilityKey(request(1, 576, 8000n), sileroAxes, names)).not.toBe(key);
    expect(compatibilityKey(request(1, 288, 16000n), sileroAxes, names)).not.toBe(key);
  });
});
