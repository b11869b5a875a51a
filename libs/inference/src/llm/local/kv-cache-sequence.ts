import { EngineError, type ModelHandle, type ModelSequence, type RunContext, type TensorData } from '../../contracts';

/** The decoder's cache layout, from config.json. */
export interface DecoderCacheShape {
  layers: number;
  kvHeads: number;
  headDim: number;
}

/**
 * One sequence's state on a decoder-only ONNX model with a KV cache (optimum's
 * `text-generation-with-past` export): `append` runs only the new tokens, feeding the keys and
 * values of everything before them (`past_key_values.{i}.key|value` [1, kvHeads, past, headDim])
 * and keeping the model's `present.*` outputs for the next call. A long prompt is run in chunks,
 * so the logits output ([1, chunk, vocab]: 150k floats per token for Qwen) stays bounded.
 */
export class KvCacheSequence {
  private cache: Record<string, TensorData> | undefined;
  /**
   * Where the runtime can keep it, the cache stays in the inference worker: a token then posts its
   * id, mask and position and receives its logits, not every layer's keys and values both ways
   * (for a Qwen2.5-0.5B-shaped cache, 12 KB per cached token, every token). Closed by close().
   */
  private readonly resident: ModelSequence | undefined;
  private tokens = 0;
  private queueWait = 0;
  private run = 0;
  private runs = 0;

  constructor(
    private readonly engine: string,
    private readonly model: ModelHandle,
    private readonly shape: DecoderCacheShape,
    private readonly context: RunContext,
    private readonly prefillChunkTokens: number,
  ) {
    this.resident = model.openSequence?.();
  }

  /** Frees the worker's copy of the cache (the sequence cannot be appended to afterwards). */
  async close(): Promise<void> {
    await this.resident?.close();
  }

  /** Tokens in the cache. */
  get length(): number {
    return this.tokens;
  }

  get queueWaitMs(): number {
    return this.queueWait;
  }

  get runMs(): number {
    return this.run;
  }

  get modelRuns(): number {
    return this.runs;
  }

  /** Runs `ids` after what is cached; returns the logits for the next token (after the last id). */
  async append(ids: readonly number[]): Promise<Float32Array> {
    if (ids.length === 0) throw new EngineError(this.engine, 'bad_request', `${this.engine}: nothing to run`, false);
    let logits: Float32Array | undefined;
    for (let start = 0; start < ids.length; start += this.prefillChunkTokens) {
      logits = await this.runChunk(ids.slice(start, start + this.prefillChunkTokens));
    }
    return logits as Float32Array;
  }

  private async runChunk(ids: readonly number[]): Promise<Float32Array> {
    const past = this.tokens;
    const total = past + ids.length;
    const { layers, kvHeads, headDim } = this.shape;
    const feeds: Record<string, TensorData> = {
      input_ids: { type: 'int64', data: BigInt64Array.from(ids, (id) => BigInt(id)), dims: [1, ids.length] },
      // One sequence, no padding: every cached and new position is attended to.
      attention_mask: { type: 'int64', data: new BigInt64Array(total).fill(1n), dims: [1, total] },
    };
    if (this.model.inputNames.includes('position_ids')) {
      const positions = new BigInt64Array(ids.length);
      for (let i = 0; i < ids.length; i++) positions[i] = BigInt(past + i);
      feeds['position_ids'] = { type: 'int64', data: positions, dims: [1, ids.length] };
    }
    const carry: Record<string, string> = {};
    for (let layer = 0; layer < layers; layer++) {
      for (const kind of ['key', 'value'] as const) {
        carry[`present.${layer}.${kind}`] = `past_key_values.${layer}.${kind}`;
        // Held by the worker after the first run of a resident sequence.
        if (this.resident && past > 0) continue;
        feeds[`past_key_values.${layer}.${kind}`] = this.cache?.[`present.${layer}.${kind}`] ?? {
          type: 'float32',
          data: new Float32Array(0),
          dims: [1, kvHeads, 0, headDim],
        };
      }
    }

    if (this.context.signal?.aborted) throw cancelled(this.engine);
    let result;
    try {
      result = this.resident ? await this.resident.step(feeds, { carry }, this.context) : await this.model.run(feeds, this.context);
    } catch (error) {
      throw asEngineError(this.engine, error, this.context.signal);
    }
    this.queueWait += result.queueWaitMs;
    this.run += result.runMs;
    this.runs += 1;

    const logits = result.outputs['logits'];
    if (!logits || logits.type !== 'float32' || logits.dims.length !== 3 || logits.dims[1] !== ids.length) {
      throw this.failed(`expected float32 logits [1, ${ids.length}, vocab], got ${logits ? `${logits.type} [${logits.dims.join(', ')}]` : 'none'}`);
    }
    const vocab = logits.dims[2] as number;
    const next = (logits.data as Float32Array).subarray((ids.length - 1) * vocab, ids.length * vocab);
    // A resident cache was checked against config.json on its first run's feeds (the pasts' dims).
    if (this.resident) {
      this.tokens = total;
      return next;
    }
    const cache: Record<string, TensorData> = {};
    for (let layer = 0; layer < layers; layer++) {
      for (const kind of ['key', 'value'] as const) {
        const present = result.outputs[`present.${layer}.${kind}`];
        const expected = [1, kvHeads, total, headDim];
        if (!present || present.dims.join() !== expected.join()) {
          // A config.json that disagrees with the graph shows up here, on the first run.
          throw this.failed(`present.${layer}.${kind} should be [${expected.join(', ')}], got ${present ? `[${present.dims.join(', ')}]` : 'nothing'}`);
        }
        cache[`present.${layer}.${kind}`] = present;
      }
    }
    this.cache = cache;
    this.tokens = total;
    return next;
  }

  private failed(detail: string): EngineError {
    return new EngineError(this.engine, 'inference_failed', `${this.engine}: ${detail}`, false);
  }
}

export function cancelled(engine: string): EngineError {
  return new EngineError(engine, 'cancelled', `${engine}: cancelled by the caller`, false);
}

/** Runtime failures keep their code and retry flag but name this engine. */
function asEngineError(engine: string, error: unknown, signal: AbortSignal | undefined): EngineError {
  if (error instanceof EngineError) {
    if (error.code === 'cancelled' && signal?.aborted === true) return cancelled(engine);
    return new EngineError(engine, error.code, `${engine}: ${error.message}`, error.retryable, { cause: error });
  }
  return new EngineError(engine, 'inference_failed', `${engine}: ${error instanceof Error ? error.message : String(error)}`, false, { cause: error });
}
