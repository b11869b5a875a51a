import * as ort from 'onnxruntime-node';
import type { TensorData } from '../contracts';
import { materialized } from './batch-row-view';
import { SequenceStepRunner, type StepRequest } from './sequence-step-runner';
import { SEQUENCE_LOST_MESSAGE, SequenceStore } from './sequence-store';
import type { StepBatching } from './step-batching';

/**
 * A stand-in session: `out` = `x` + the sum of `state`'s row (per row), `state` grows by one
 * position holding that sum. Rows are independent, as in a decoder, so a batched run must give
 * each step what it gets alone. Records every run's feeds.
 */
class FakeDecoder {
  readonly runs: Array<Record<string, ort.Tensor>> = [];
  readonly results: Array<Record<string, ort.Tensor>> = [];
  failWhenBatched = false;

  async run(feeds: Record<string, ort.Tensor>): Promise<Record<string, ort.Tensor>> {
    this.runs.push(feeds);
    const x = feeds['x']!;
    const state = feeds['state']!;
    const rows = x.dims[0]!;
    if (this.failWhenBatched && rows > 1) throw new Error('this graph cannot batch');
    const length = state.dims[1]!;
    const out = new Float32Array(rows);
    const next = new Float32Array(rows * (length + 1));
    for (let row = 0; row < rows; row++) {
      let sum = 0;
      for (let position = 0; position < length; position++) sum += (state.data as Float32Array)[row * length + position]!;
      out[row] = (x.data as Float32Array)[row]! + sum;
      next.set((state.data as Float32Array).subarray(row * length, (row + 1) * length), row * (length + 1));
      next[row * (length + 1) + length] = out[row]!;
    }
    const results = { out: new ort.Tensor('float32', out, [rows, 1]), next_state: new ort.Tensor('float32', next, [rows, length + 1]) };
    this.results.push(results);
    return results;
  }
}

const batching: StepBatching = { inputs: { x: 0, state: 0 }, outputs: { out: 0, next_state: 0 }, leftPadded: { state: 1 }, maxRows: 8 };
const x = (value: number): TensorData => ({ type: 'float32', data: Float32Array.of(value), dims: [1, 1] });
const emptyState = (): TensorData => ({ type: 'float32', data: new Float32Array(0), dims: [1, 0] });
const carry = { next_state: 'state' };
const first = (id: string, value: number): StepRequest => ({ feeds: { x: x(value), state: emptyState() }, sequence: { id, first: true, carry, retain: [], discard: [] } });
const next = (id: string, value: number): StepRequest => ({ feeds: { x: x(value) }, sequence: { id, first: false, carry, retain: [], discard: [] } });
const outOf = (outcome: unknown): number => Array.from(((outcome as { outputs: Record<string, TensorData> }).outputs['out']!.data as Float32Array))[0]!;

describe('SequenceStepRunner (a worker running several sequences’ steps together)', () => {
  it('gives each step of a joined run what it gets alone, and keeps each sequence’s own state, trimmed of padding', async () => {
    const session = new FakeDecoder();
    const store = new SequenceStore();
    const runner = new SequenceStepRunner(store);
    // Sequence a is two steps ahead of b: their states differ in length and must be padded to join.
    await runner.run('m', session, [first('a', 1)], batching);
    await runner.run('m', session, [next('a', 2)], batching);
    const { outcomes, runs } = await runner.run('m', session, [next('a', 3), first('b', 10)], batching);
    expect(runs).toEqual([{ steps: [0, 1], stepRows: [1, 1], runMs: expect.any(Number) }]);
    // a: 3 + (1 + 3) = 7; b: 10 + 0.
    expect(outcomes.map(outOf)).toEqual([7, 10]);
    expect(Array.from(materialized(store.begin('a', 'm', false)['state']!).data as Float32Array)).toEqual([1, 3, 7]);
    expect(Array.from(materialized(store.begin('b', 'm', false)['state']!).data as Float32Array)).toEqual([10]);
    // The padded run fed b's state with zeros in front.
    expect(session.runs[2]!['state']!.dims).toEqual([2, 2]);
    expect(Array.from(session.runs[2]!['state']!.data as Float32Array)).toEqual([1, 3, 0, 0]);
  });

  it('feeds a group that runs again the batch its last run produced, and splits it only when the group changes', async () => {
    const session = new FakeDecoder();
    const runner = new SequenceStepRunner(new SequenceStore());
    await runner.run('m', session, [first('a', 1)], batching);
    await runner.run('m', session, [next('a', 2), first('b', 10)], batching);
    // Same group, submitted in the other order: fed the very batch run 2 produced, rows in its order.
    const { outcomes } = await runner.run('m', session, [next('b', 20), next('a', 3)], batching);
    expect(session.runs[2]!['state']).toBe(session.results[1]!['next_state']);
    expect(Array.from(session.runs[2]!['state']!.data as Float32Array)).toEqual([1, 3, 0, 10]);
    expect(outcomes.map(outOf)).toEqual([30, 7]);
    // a runs alone: its rows are copied out of the batch, without b's and without padding.
    const alone = await runner.run('m', session, [next('a', 4)], batching);
    expect(session.runs[3]!['state']!.dims).toEqual([1, 3]);
    expect(outOf(alone.outcomes[0])).toBe(4 + 1 + 3 + 7);
  });

  it('fails only the step whose sequence state is lost', async () => {
    const runner = new SequenceStepRunner(new SequenceStore());
    const session = new FakeDecoder();
    await runner.run('m', session, [first('a', 1)], batching);
    const { outcomes } = await runner.run('m', session, [next('a', 2), next('gone', 5)], batching);
    expect(outOf(outcomes[0])).toBe(3);
    expect((outcomes[1] as { error: string }).error).toContain(SEQUENCE_LOST_MESSAGE);
  });

  it('re-runs a joined run that fails one step at a time', async () => {
    const runner = new SequenceStepRunner(new SequenceStore());
    const session = new FakeDecoder();
    session.failWhenBatched = true;
    const { outcomes, runs } = await runner.run('m', session, [first('a', 1), first('b', 2)], batching);
    expect(outcomes.map(outOf)).toEqual([1, 2]);
    expect(runs.map((run) => run.steps)).toEqual([[0], [1]]);
  });

  it('joins held state that did not change once, not once per token', async () => {
    const runner = new SequenceStepRunner(new SequenceStore());
    const session = new FakeDecoder();
    // `state` is retained (fed once, never carried): the same held tensors on every step.
    const retained = (id: string, isFirst: boolean, value: number): StepRequest => ({
      feeds: isFirst ? { x: x(value), state: { type: 'float32', data: Float32Array.of(value, value), dims: [1, 2] } } : { x: x(value) },
      sequence: { id, first: isFirst, carry: {}, retain: isFirst ? ['state'] : [], discard: [] },
    });
    await runner.run('m', session, [retained('a', true, 1), retained('b', true, 2)], batching);
    await runner.run('m', session, [retained('a', false, 3), retained('b', false, 4)], batching);
    await runner.run('m', session, [retained('a', false, 5), retained('b', false, 6)], batching);
    const [, second, third] = session.runs.map((feeds) => feeds['state']);
    expect(third).toBe(second);
    expect(session.runs[2]!['x']).not.toBe(session.runs[1]!['x']);
  });
});
