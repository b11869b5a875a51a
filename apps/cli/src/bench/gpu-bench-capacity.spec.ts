import { callsPerDevice, computePerSecond, DEFAULT_CALL_MODEL, poissonQuantile95, replyPathMs, turnBatch, type CallModel, type PathCosts, type StageCost } from './gpu-bench-capacity';

/** A stage whose latency and per-item cost are the same at every batch size. */
const flat = (ms: number, computeMsPerItem = ms): StageCost[] => [1, 4, 16].map((batch) => ({ batch, p50Ms: ms, p95Ms: ms, computeMsPerItem }));

const costs = (overrides: Partial<PathCosts> = {}): PathCosts => ({
  vad: flat(0.1),
  smartTurn: flat(10),
  whisperEncoder: flat(100),
  whisperDecoderFirst: flat(10),
  whisperDecoderStep: flat(5),
  tts: flat(50),
  ...overrides,
});

const model: CallModel = { ...DEFAULT_CALL_MODEL, budgetMs: 500, computeUnits: 1 };

describe('gpu bench capacity model', () => {
  it('sums one call\'s compute per second from the stated demand', () => {
    // VAD 31.25 x 0.1 ms + per 8 s turn: 10 + 100 + 10 + 19 x 5 + 2 x 50 ms = 315 ms.
    expect(computePerSecond(costs(), model, 1)).toBeCloseTo(0.003125 + 0.315 / 8, 9);
  });

  it('adds the LLM steps only when the LLM was measured', () => {
    const withLlm = computePerSecond(costs({ llmStep: flat(20) }), model, 1);
    expect(withLlm - computePerSecond(costs(), model, 1)).toBeCloseTo((40 * 0.02) / 8, 9);
  });

  it('takes the reply path at p95 for single runs and p50 for repeated steps', () => {
    const step: StageCost[] = [{ batch: 1, p50Ms: 5, p95Ms: 50, computeMsPerItem: 5 }];
    expect(replyPathMs(costs({ whisperDecoderStep: step }), model, 1)).toBe(10 + 100 + 10 + 19 * 5 + 50);
  });

  it('finds the utilisation bound where 0.8 of the device is used', () => {
    const result = callsPerDevice(costs(), { ...model, budgetMs: 1000 });
    const perCall = computePerSecond(costs(), model, 1);
    expect(result.utilisationBound).toBe(Math.floor(0.8 / perCall));
    expect(result.callsPerDevice).toBe(result.utilisationBound);
  });

  it('scales the utilisation bound with the compute units', () => {
    const one = callsPerDevice(costs(), { ...model, budgetMs: 1000 }).utilisationBound;
    const two = callsPerDevice(costs(), { ...model, budgetMs: 1000, computeUnits: 2 }).utilisationBound;
    expect(two).toBeGreaterThanOrEqual(2 * one);
    expect(two).toBeLessThanOrEqual(2 * one + 1);
  });

  it('uses the cheaper per-item cost of a larger batch once enough calls produce it', () => {
    const batched: StageCost[] = [
      { batch: 1, p50Ms: 100, p95Ms: 100, computeMsPerItem: 100 },
      { batch: 16, p50Ms: 400, p95Ms: 400, computeMsPerItem: 25 },
    ];
    expect(computePerSecond(costs({ whisperEncoder: batched }), model, 1)).toBeCloseTo(computePerSecond(costs(), model, 1), 9);
    const many = 2000; // 2000 calls / 8 s x 0.5 s = 125 turns per window: batch 16 applies
    expect(computePerSecond(costs({ whisperEncoder: batched }), model, many)).toBeLessThan(computePerSecond(costs(), model, many));
  });

  it('is latency-bound at 0 when one lone reply already misses the budget', () => {
    const result = callsPerDevice(costs({ whisperEncoder: flat(1000) }), model);
    expect(result.replyPathMsAtBatch1).toBeGreaterThan(500);
    expect(result.latencyBound).toBe(0);
    expect(result.callsPerDevice).toBe(0);
    expect(result.latencyLimit).toBe('budget');
  });

  it('stops the latency bound when the turn batch passes the largest measured batch', () => {
    const result = callsPerDevice(costs(), { ...model, budgetMs: 400 });
    expect(result.latencyLimit).toBe('largest measured batch');
    expect(turnBatch(result.latencyBound, { ...model, budgetMs: 400 })).toBeLessThanOrEqual(16);
    expect(turnBatch(result.latencyBound + 1, { ...model, budgetMs: 400 })).toBeGreaterThan(16);
  });

  it('finds the latency bound where the batch\'s latency reaches the budget', () => {
    // Encoder latency grows with batch: 100 ms at 1, 200 at 4, 600 at 16. Budget 500: batch <= 4.
    const growing: StageCost[] = [
      { batch: 1, p50Ms: 100, p95Ms: 100, computeMsPerItem: 100 },
      { batch: 4, p50Ms: 200, p95Ms: 200, computeMsPerItem: 50 },
      { batch: 16, p50Ms: 600, p95Ms: 600, computeMsPerItem: 37.5 },
    ];
    const result = callsPerDevice(costs({ whisperEncoder: growing }), { ...model, computeUnits: 1000 });
    expect(result.latencyLimit).toBe('budget');
    expect(turnBatch(result.latencyBound, model)).toBeLessThanOrEqual(4);
    expect(turnBatch(result.latencyBound + 1, model)).toBeGreaterThan(4);
    expect(result.callsPerDevice).toBe(result.latencyBound);
  });

  it('computes the Poisson 95th percentile exactly for small means and by normal approximation after', () => {
    expect(poissonQuantile95(0)).toBe(0);
    expect(poissonQuantile95(0.05)).toBe(0); // P(0) = e^-0.05 = 0.951
    expect(poissonQuantile95(0.06)).toBe(1); // P(0) = 0.942
    expect(poissonQuantile95(1)).toBe(3); // P(<=2) = 0.920, P(<=3) = 0.981
    expect(poissonQuantile95(100)).toBe(Math.ceil(100 + 16.45));
  });
});
