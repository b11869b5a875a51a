/**
 * "Calls one device carries" for a pipeline agent, from measured per-model costs: pure arithmetic,
 * kept apart from the measuring so the model can be unit-tested and read on its own.
 *
 * A call's demand (per second of call, all stated in CallModel):
 *  - VAD runs continuously: one 32 ms window every 32 ms (31.25/s);
 *  - one caller turn every `turnIntervalS`, each needing one Smart Turn run, one Whisper encode,
 *    one first decoder step (cross-attention keys/values) plus `decoderTokensPerTurn - 1` cached
 *    steps, `ttsSentencesPerTurn` TTS sentences and, when measured, `llmTokensPerTurn` LLM steps.
 *
 * (a) utilisation bound: the most calls whose summed compute-seconds per second stay within
 *     `utilisationTarget` x `computeUnits` (worker threads on CPU, 1 for a GPU);
 * (b) latency bound: the most calls whose reply path (turn + encode + decode + LLM tokens to the
 *     first sentence + first TTS sentence), run at the batch that concurrent turns produce, stays
 *     within `budgetMs`. Turns end as a Poisson process (N / turnIntervalS per second); the turns
 *     that share a reply window are those ending within one budget, and the batch is the 95th
 *     percentile of that Poisson count.
 * Calls per device = min(a, b).
 */

/** One measured batch size of one stage. */
export interface StageCost {
  batch: number;
  /** Latency of a whole round of `batch` items submitted together. */
  p50Ms: number;
  p95Ms: number;
  /** Worker (device) busy time per item: what the item costs the device's capacity. */
  computeMsPerItem: number;
}

/** The stages of a pipeline agent's call path, each with its costs by batch size (any order). */
export interface PathCosts {
  vad: readonly StageCost[];
  smartTurn: readonly StageCost[];
  whisperEncoder: readonly StageCost[];
  whisperDecoderFirst: readonly StageCost[];
  whisperDecoderStep: readonly StageCost[];
  tts: readonly StageCost[];
  /** Absent when the LLM was not measured: the reply text is then assumed to come from elsewhere. */
  llmStep?: readonly StageCost[];
}

export interface CallModel {
  budgetMs: number;
  vadWindowsPerS: number;
  turnIntervalS: number;
  decoderTokensPerTurn: number;
  ttsSentencesPerTurn: number;
  llmTokensPerTurn: number;
  llmTokensToFirstSentence: number;
  utilisationTarget: number;
  computeUnits: number;
}

export const DEFAULT_CALL_MODEL: Omit<CallModel, 'budgetMs' | 'computeUnits'> = {
  vadWindowsPerS: 1000 / 32,
  turnIntervalS: 8,
  decoderTokensPerTurn: 20,
  ttsSentencesPerTurn: 2,
  llmTokensPerTurn: 40,
  llmTokensToFirstSentence: 15,
  utilisationTarget: 0.8,
};

export interface CapacityResult {
  utilisationBound: number;
  latencyBound: number;
  callsPerDevice: number;
  /** Reply-path latency for one lone turn (batch 1): the floor the budget is compared with. */
  replyPathMsAtBatch1: number;
  /** Compute-seconds per second one call needs (at batch 1 costs). */
  computePerCallAtBatch1: number;
  /** Why the latency bound stopped where it did. */
  latencyLimit: 'budget' | 'largest measured batch' | 'search limit';
}

/** Calls are searched up to this; a figure at the limit means "at least". */
export const MAX_CALLS = 100_000;

export function callsPerDevice(costs: PathCosts, model: CallModel): CapacityResult {
  const utilisationBound = largestPassing((calls) => computePerSecond(costs, model, calls) <= model.utilisationTarget * model.computeUnits);
  let latencyLimit: CapacityResult['latencyLimit'] = 'search limit';
  const latencyBound = largestPassing((calls) => {
    const pathMs = replyPathMs(costs, model, turnBatch(calls, model));
    if (pathMs === undefined) latencyLimit = 'largest measured batch';
    else if (pathMs > model.budgetMs) latencyLimit = 'budget';
    return pathMs !== undefined && pathMs <= model.budgetMs;
  });
  return {
    utilisationBound,
    latencyBound,
    callsPerDevice: Math.min(utilisationBound, latencyBound),
    replyPathMsAtBatch1: replyPathMs(costs, model, 1) ?? Number.NaN,
    computePerCallAtBatch1: computePerSecond(costs, model, 1),
    latencyLimit,
  };
}

/**
 * Compute-seconds per second that `calls` calls need. VAD windows of N calls spread over the
 * compute units, so its batch is about N / units; turn-path models run at the concurrent-turn batch.
 */
export function computePerSecond(costs: PathCosts, model: CallModel, calls: number): number {
  const turnsPerS = calls / model.turnIntervalS;
  const batch = turnBatch(calls, model);
  const perItemS = (stage: readonly StageCost[], atBatch: number): number => costAtOrBelow(stage, atBatch).computeMsPerItem / 1000;
  let load = calls * model.vadWindowsPerS * perItemS(costs.vad, Math.ceil(calls / model.computeUnits));
  load += turnsPerS * perItemS(costs.smartTurn, batch);
  load += turnsPerS * perItemS(costs.whisperEncoder, batch);
  load += turnsPerS * perItemS(costs.whisperDecoderFirst, batch);
  load += turnsPerS * (model.decoderTokensPerTurn - 1) * perItemS(costs.whisperDecoderStep, batch);
  load += turnsPerS * model.ttsSentencesPerTurn * perItemS(costs.tts, batch);
  if (costs.llmStep) load += turnsPerS * model.llmTokensPerTurn * perItemS(costs.llmStep, batch);
  return load;
}

/**
 * Reply-path latency at a batch of `batch` concurrent turns, or undefined past the largest
 * measured batch (the bench cannot vouch for it). Single runs count at p95; the repeated decoder
 * and LLM steps at p50, since a sum of 20 p95s would describe no real reply.
 */
export function replyPathMs(costs: PathCosts, model: CallModel, batch: number): number | undefined {
  const at = (stage: readonly StageCost[]): StageCost | undefined => costAtOrAbove(stage, batch);
  const turn = at(costs.smartTurn);
  const encode = at(costs.whisperEncoder);
  const first = at(costs.whisperDecoderFirst);
  const step = at(costs.whisperDecoderStep);
  const tts = at(costs.tts);
  const llm = costs.llmStep ? at(costs.llmStep) : undefined;
  if (!turn || !encode || !first || !step || !tts || (costs.llmStep && !llm)) return undefined;
  let ms = turn.p95Ms + encode.p95Ms + first.p95Ms + (model.decoderTokensPerTurn - 1) * step.p50Ms + tts.p95Ms;
  if (llm) ms += model.llmTokensToFirstSentence * llm.p50Ms;
  return ms;
}

/** Turns whose reply paths overlap: 95th percentile of Poisson(N / interval x budget), at least 1. */
export function turnBatch(calls: number, model: CallModel): number {
  return Math.max(1, poissonQuantile95((calls / model.turnIntervalS) * (model.budgetMs / 1000)));
}

/** Smallest k with P(X <= k) >= 0.95 for X ~ Poisson(mean); normal approximation past mean 50. */
export function poissonQuantile95(mean: number): number {
  if (mean <= 0) return 0;
  if (mean > 50) return Math.ceil(mean + 1.645 * Math.sqrt(mean));
  let probability = Math.exp(-mean);
  let cumulative = probability;
  let k = 0;
  while (cumulative < 0.95) {
    k += 1;
    probability *= mean / k;
    cumulative += probability;
  }
  return k;
}

/** Largest n in [0, MAX_CALLS] with passes(n), assuming passes is true up to some n and false after. */
function largestPassing(passes: (calls: number) => boolean): number {
  if (!passes(1)) return 0;
  let good = 1;
  let bad = MAX_CALLS + 1;
  // Doubling then bisection: the tests are cheap, but not cheap enough to scan 100 000 values twice.
  for (let calls = 2; calls <= MAX_CALLS; calls *= 2) {
    if (!passes(calls)) {
      bad = calls;
      break;
    }
    good = calls;
  }
  if (bad === MAX_CALLS + 1 && passes(MAX_CALLS)) return MAX_CALLS;
  while (bad - good > 1) {
    const middle = Math.floor((good + bad) / 2);
    if (passes(middle)) good = middle;
    else bad = middle;
  }
  return good;
}

/** The measured batch closest to `batch` from below (per-item cost falls with batch: conservative). */
function costAtOrBelow(stage: readonly StageCost[], batch: number): StageCost {
  const sorted = sortedByBatch(stage);
  return [...sorted].reverse().find((cost) => cost.batch <= batch) ?? sorted[0]!;
}

/** The measured batch closest to `batch` from above (latency rises with batch: conservative). */
function costAtOrAbove(stage: readonly StageCost[], batch: number): StageCost | undefined {
  return sortedByBatch(stage).find((cost) => cost.batch >= batch);
}

function sortedByBatch(stage: readonly StageCost[]): StageCost[] {
  if (stage.length === 0) throw new RangeError('a stage needs at least one measured batch size');
  return [...stage].sort((a, b) => a.batch - b.batch);
}
