import type { TensorData } from '../contracts';
import { joinStepInputs, padStart, planStepGroups, type ShapedTensor, type StepBatching } from './step-batching';

const float = (dims: number[], fill = 0): TensorData => ({ type: 'float32', data: new Float32Array(dims.reduce((a, b) => a * b, 1)).fill(fill), dims });
const flag = (value: number): ShapedTensor => ({ type: 'bool', data: Uint8Array.of(value), dims: [1] });

/** Whisper-like: no padding, a shared branch flag. */
const equalLengths: StepBatching = { inputs: { ids: 0, past: 0 }, outputs: { logits: 0 }, leftPadded: {}, maxRows: 8 };
/** LLM-like: caches and mask padded on the left. */
const padded: StepBatching = { inputs: { ids: 0, past: 0, mask: 0 }, outputs: { logits: 0 }, leftPadded: { past: 2, mask: 1 }, maxRows: 8 };

const whisperStep = (past: number, branch = 1): Record<string, ShapedTensor> => ({ ids: float([1, 1]), past: float([1, 2, past, 4]), use_cache_branch: flag(branch) });
const llmStep = (past: number, tokens = 1): Record<string, ShapedTensor> => ({ ids: float([1, tokens]), past: float([1, 2, past, 4]), mask: float([1, past + tokens]) });

describe('planStepGroups (which sequence steps share a run)', () => {
  it('joins steps whose state has the same shape and whose shared inputs are equal', () => {
    const groups = planStepGroups([whisperStep(5), whisperStep(5), whisperStep(6), whisperStep(5, 0), whisperStep(5)], equalLengths);
    expect(groups).toEqual([{ steps: [0, 1, 4], pads: [0, 0, 0] }, { steps: [2], pads: [0] }, { steps: [3], pads: [0] }]);
  });

  it('runs every step alone when the model batches no steps (maxRows 1)', () => {
    expect(planStepGroups([whisperStep(5), whisperStep(5)], { ...equalLengths, maxRows: 1 })).toEqual([
      { steps: [0], pads: [0] },
      { steps: [1], pads: [0] },
    ]);
  });

  it('never puts more rows in a run than maxRows', () => {
    const groups = planStepGroups(Array.from({ length: 5 }, () => whisperStep(3)), { ...equalLengths, maxRows: 2 });
    expect(groups.map((group) => group.steps)).toEqual([[0, 1], [2, 3], [4]]);
  });

  it('pads caches of different lengths to the longest, longest first', () => {
    const groups = planStepGroups([llmStep(20), llmStep(31), llmStep(25)], padded);
    expect(groups).toEqual([{ steps: [1, 2, 0], pads: [0, 6, 11] }]);
  });

  it('does not join steps of different token counts (a prefill chunk and a decode step)', () => {
    expect(planStepGroups([llmStep(20, 1), llmStep(0, 12)], padded).map((group) => group.steps)).toEqual([[0], [1]]);
  });

  it('starts a new run where padding would cost more positions than the rows hold', () => {
    // 400 vs 30: 370 zeros for 430 real positions would pass; a third short one tips it over.
    const groups = planStepGroups([llmStep(400), llmStep(30), llmStep(30), llmStep(28)], padded);
    expect(groups).toEqual([
      { steps: [0, 1], pads: [0, 370] },
      { steps: [2, 3], pads: [0, 2] },
    ]);
  });

  it('keeps a step that cannot join anything alone (a large shared input)', () => {
    const big = { ...whisperStep(5), table: float([100]) };
    expect(planStepGroups([big, { ...big }], equalLengths).map((group) => group.steps)).toEqual([[0], [1]]);
  });
});

describe('padStart and joinStepInputs', () => {
  it('puts zeros in front along the padding axis and joins rows along the batch axis', () => {
    const short: TensorData = { type: 'float32', data: Float32Array.of(1, 2, 3, 4), dims: [1, 2, 2] };
    expect(padStart(short, 2, 1)).toEqual({ type: 'float32', data: Float32Array.of(0, 1, 2, 0, 3, 4), dims: [1, 2, 3] });
    const long: TensorData = { type: 'float32', data: Float32Array.of(5, 6, 7, 8, 9, 10), dims: [1, 2, 3] };
    expect(joinStepInputs([long, short], 0, 2, [0, 1])).toEqual({ type: 'float32', data: Float32Array.of(5, 6, 7, 8, 9, 10, 0, 1, 2, 0, 3, 4), dims: [2, 2, 3] });
  });

  it('pads an int64 attention mask with zeros (masked positions)', () => {
    const mask: TensorData = { type: 'int64', data: BigInt64Array.of(1n, 1n), dims: [1, 2] };
    expect(padStart(mask, 1, 2)).toEqual({ type: 'int64', data: BigInt64Array.of(0n, 0n, 1n, 1n), dims: [1, 4] });
  });
});
