import { TokenSampler } from './token-sampler';

const logits = Float32Array.from([0.5, 2, 1.9, -1, 8]); // id 4 is past the tokenizer's vocab (padding)

describe('TokenSampler', () => {
  it('greedy: the best id the tokenizer knows, ignoring padded logits', () => {
    expect(new TokenSampler(4, { temperature: 0, topK: 0, topP: 1, seed: 1 }).pick(logits)).toBe(1);
  });

  it('sampling is reproducible per seed and follows the softmax', () => {
    const draw = (seed: number): number[] => {
      const sampler = new TokenSampler(4, { temperature: 1, topK: 0, topP: 1, seed });
      return Array.from({ length: 4000 }, () => sampler.pick(logits));
    };
    const first = draw(3);
    expect(draw(3)).toEqual(first);
    const counts = [0, 1, 2, 3].map((id) => first.filter((picked) => picked === id).length / first.length);
    const weights = [0.5, 2, 1.9, -1].map(Math.exp);
    const total = weights.reduce((a, b) => a + b, 0);
    weights.forEach((weight, id) => expect(Math.abs((counts[id] as number) - weight / total)).toBeLessThan(0.03));
  });

  it('top-k and top-p keep only the most likely tokens', () => {
    // Probabilities of ids 0..3: 0.102, 0.459, 0.415, 0.023.
    const picked = (topK: number, topP: number): number[] => {
      const sampler = new TokenSampler(4, { temperature: 1, topK, topP, seed: 9 });
      return [...new Set(Array.from({ length: 500 }, () => sampler.pick(logits)))].sort();
    };
    expect(picked(2, 1)).toEqual([1, 2]);
    expect(picked(0, 0.4)).toEqual([1]);
    expect(picked(0, 0.85)).toEqual([1, 2]);
    expect(picked(0, 0.95)).toEqual([0, 1, 2]);
  });
});
