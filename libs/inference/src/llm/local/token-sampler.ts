export interface SamplingSettings {
  /** 0: greedy (argmax); above 0: logits / temperature, then sampling. */
  temperature: number;
  /** Keep only the k most likely tokens; 0: no limit. */
  topK: number;
  /** Keep the smallest set of tokens whose probability reaches p; 1: no limit. */
  topP: number;
  /** Seed of the sampling generator: the same seed and logits give the same tokens. */
  seed: number;
}

/**
 * Tokens whose probability is below this fraction of the most likely one are never sampled: they
 * would almost never be drawn, and skipping them keeps the sort to a handful of candidates out of
 * a 150k vocabulary.
 */
const MIN_RELATIVE_PROBABILITY = 1e-6;

/**
 * Picks the next token from a row of logits: greedy, or seeded sampling with temperature, top-k
 * and top-p. Only ids the tokenizer knows are considered (exports pad the logits to a multiple of
 * 64 or 128). Buffers are sized once per sampler, not per token.
 */
export class TokenSampler {
  private state: number;
  private readonly weights: Float32Array;
  private readonly candidates: Int32Array;

  constructor(
    private readonly vocabSize: number,
    private readonly settings: SamplingSettings,
  ) {
    this.state = settings.seed >>> 0;
    const sampling = settings.temperature > 0;
    this.weights = new Float32Array(sampling ? vocabSize : 0);
    this.candidates = new Int32Array(sampling ? vocabSize : 0);
  }

  pick(logits: Float32Array): number {
    const size = Math.min(this.vocabSize, logits.length);
    if (this.settings.temperature <= 0) return argmax(logits, size);

    const inverseTemperature = 1 / this.settings.temperature;
    let max = -Infinity;
    for (let id = 0; id < size; id++) {
      const value = logits[id] as number;
      if (value > max) max = value;
    }
    const floor = Math.log(MIN_RELATIVE_PROBABILITY);
    let count = 0;
    for (let id = 0; id < size; id++) {
      const scaled = ((logits[id] as number) - max) * inverseTemperature;
      if (!(scaled >= floor)) continue; // also skips NaN
      this.weights[id] = Math.exp(scaled);
      this.candidates[count++] = id;
    }
    if (count === 0) return argmax(logits, size);
    const ranked = this.candidates.subarray(0, count).sort((a, b) => (this.weights[b] as number) - (this.weights[a] as number) || a - b);
    const kept = this.settings.topK > 0 ? Math.min(count, this.settings.topK) : count;
    let total = 0;
    for (let i = 0; i < kept; i++) total += this.weights[ranked[i] as number] as number;
    let cutoff = kept;
    if (this.settings.topP < 1) {
      let cumulative = 0;
      for (let i = 0; i < kept; i++) {
        cumulative += (this.weights[ranked[i] as number] as number) / total;
        if (cumulative >= this.settings.topP) {
          cutoff = i + 1;
          break;
        }
      }
      total = 0;
      for (let i = 0; i < cutoff; i++) total += this.weights[ranked[i] as number] as number;
    }
    let draw = this.next() * total;
    for (let i = 0; i < cutoff; i++) {
      draw -= this.weights[ranked[i] as number] as number;
      if (draw < 0) return ranked[i] as number;
    }
    return ranked[cutoff - 1] as number;
  }

  /** mulberry32: small, fast and the same on every platform. */
  private next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
}

function argmax(logits: Float32Array, size: number): number {
  let best = 0;
  let bestScore = -Infinity;
  for (let id = 0; id < size; id++) {
    const score = logits[id] as number;
    if (score > bestScore) {
      bestScore = score;
      best = id;
    }
  }
  return best;
}
