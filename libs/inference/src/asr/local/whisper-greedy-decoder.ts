import { EngineError, type ModelHandle, type ModelSequence, type RunContext, type TensorData } from '../../contracts';
import type { WhisperDecoderLayout } from './whisper-model-folder';
import type { WhisperSpecialTokens } from './whisper-special-tokens';

export interface WhisperDecoderShape {
  layout: WhisperDecoderLayout;
  layers: number;
  heads: number;
  headDim: number;
  melBins: number;
  frames: number;
}

export interface GreedyDecodeResult {
  /** Generated tokens, without the prompt and without end-of-text. */
  tokens: number[];
  queueWaitMs: number;
  runMs: number;
  decoderSteps: number;
}

/**
 * Greedy Whisper decoding over an encoder and a decoder ModelHandle: encode the log-mel window
 * once, then pick the most likely allowed token until end-of-text or the position limit.
 * 'merged' feeds only the newest token with the KV cache from the previous step
 * (use_cache_branch); 'no-cache' feeds the whole sequence every step.
 */
export class WhisperGreedyDecoder {
  private readonly suppressMask: Uint8Array;
  private readonly beginSuppressMask: Uint8Array;

  constructor(
    private readonly engine: string,
    private readonly encoder: ModelHandle,
    private readonly decoder: ModelHandle,
    private readonly shape: WhisperDecoderShape,
    private readonly tokens: WhisperSpecialTokens,
    vocabSize: number,
  ) {
    this.suppressMask = maskOf(tokens.suppressed, vocabSize);
    this.beginSuppressMask = maskOf(tokens.beginSuppressed, vocabSize);
  }

  async decode(features: Float32Array, prompt: readonly number[], context: RunContext): Promise<GreedyDecodeResult> {
    const { melBins, frames } = this.shape;
    let queueWaitMs = 0;
    let runMs = 0;
    const run = async (model: ModelHandle, feeds: Record<string, TensorData>): Promise<Record<string, TensorData>> => {
      if (context.signal?.aborted) throw new EngineError(this.engine, 'cancelled', 'transcription cancelled', false);
      const result = await model.run(feeds, context);
      queueWaitMs += result.queueWaitMs;
      runMs += result.runMs;
      return result.outputs;
    };

    const encoded = await run(this.encoder, { input_features: { type: 'float32', data: features, dims: [1, melBins, frames] } });
    const hiddenStates = encoded['last_hidden_state'] ?? Object.values(encoded)[0];
    if (!hiddenStates) throw new EngineError(this.engine, 'inference_failed', 'encoder returned no output', false);

    const sequence = [...prompt];
    const generated: number[] = [];
    let cache: Record<string, TensorData> | undefined;
    let steps = 0;
    // The KV cache stays in the inference worker when the runtime can keep it there: a token then
    // posts its id and receives its logits, instead of the whole cache (for whisper-base about
    // 37 MB of cross-attention keys and values) crossing the thread boundary twice per token.
    const resident = this.shape.layout === 'merged' ? this.decoder.openSequence?.() : undefined;
    try {
      while (sequence.length < this.tokens.maxLength) {
        const outputs = resident
          ? await this.residentStep(resident, sequence, hiddenStates, steps === 0, context, (result) => ((queueWaitMs += result.queueWaitMs), (runMs += result.runMs)))
          : await run(this.decoder, this.decoderFeeds(sequence, hiddenStates, cache));
        steps += 1;
        const logits = outputs['logits'];
        if (!logits || logits.type !== 'float32' || logits.dims.length !== 3) {
          throw new EngineError(this.engine, 'inference_failed', 'decoder returned no float32 logits [batch, tokens, vocab]', false);
        }
        const next = this.pickToken(logits, generated.length === 0);
        if (next === this.tokens.endOfText) break;
        sequence.push(next);
        generated.push(next);
        if (this.shape.layout === 'merged' && !resident) cache = nextCache(outputs, cache);
      }
    } finally {
      await resident?.close();
    }
    return { tokens: generated, queueWaitMs, runMs, decoderSteps: steps };
  }

  /**
   * One merged-decoder step with the cache held by the worker. The first step feeds the prompt,
   * the encoder's hidden states (retained: a graph input on every step) and empty pasts, and keeps
   * every present as the next past; later steps feed the newest token and keep the self-attention
   * presents, while the cross-attention ones computed on the first step stay as they are (later
   * steps return placeholders for them, which are discarded).
   */
  private async residentStep(
    resident: ModelSequence,
    sequence: readonly number[],
    hiddenStates: TensorData,
    first: boolean,
    context: RunContext,
    account: (result: { queueWaitMs: number; runMs: number }) => void,
  ): Promise<Record<string, TensorData>> {
    if (context.signal?.aborted) throw new EngineError(this.engine, 'cancelled', 'transcription cancelled', false);
    const { layers } = this.shape;
    const carry: Record<string, string> = {};
    const discard: string[] = [];
    for (let layer = 0; layer < layers; layer++) {
      for (const name of ['decoder.key', 'decoder.value']) carry[`present.${layer}.${name}`] = `past_key_values.${layer}.${name}`;
      for (const name of ['encoder.key', 'encoder.value']) {
        if (first) carry[`present.${layer}.${name}`] = `past_key_values.${layer}.${name}`;
        else discard.push(`present.${layer}.${name}`);
      }
    }
    const feeds = first
      ? this.decoderFeeds(sequence, hiddenStates, undefined)
      : {
          input_ids: { type: 'int64' as const, data: BigInt64Array.of(BigInt(sequence[sequence.length - 1]!)), dims: [1, 1] },
          use_cache_branch: { type: 'bool' as const, data: Uint8Array.of(1), dims: [1] },
        };
    const result = await resident.step(feeds, { carry, discard, retain: first ? ['encoder_hidden_states'] : [] }, context);
    account(result);
    return result.outputs;
  }

  private decoderFeeds(sequence: readonly number[], hiddenStates: TensorData, cache: Record<string, TensorData> | undefined): Record<string, TensorData> {
    const ids = cache ? sequence.slice(-1) : sequence;
    const feeds: Record<string, TensorData> = {
      input_ids: { type: 'int64', data: BigInt64Array.from(ids, (id) => BigInt(id)), dims: [1, ids.length] },
      encoder_hidden_states: hiddenStates,
    };
    if (this.shape.layout === 'no-cache') return feeds;
    const { layers, heads, headDim } = this.shape;
    for (let layer = 0; layer < layers; layer++) {
      for (const name of ['decoder.key', 'decoder.value', 'encoder.key', 'encoder.value']) {
        // First step: empty past (sequence length 0); the If branch computes the encoder keys/values.
        feeds[`past_key_values.${layer}.${name}`] = cache?.[`present.${layer}.${name}`] ?? {
          type: 'float32',
          data: new Float32Array(0),
          dims: [1, heads, 0, headDim],
        };
      }
    }
    feeds['use_cache_branch'] = { type: 'bool', data: Uint8Array.of(cache ? 1 : 0), dims: [1] };
    return feeds;
  }

  /** Argmax over the last position's logits, skipping suppressed tokens. */
  private pickToken(logits: TensorData, first: boolean): number {
    const vocab = logits.dims[2] as number;
    const offset = ((logits.dims[1] as number) - 1) * vocab;
    const data = logits.data as Float32Array;
    let best = this.tokens.endOfText;
    let bestScore = -Infinity;
    for (let id = 0; id < vocab; id++) {
      if (this.suppressMask[id] === 1 || (first && this.beginSuppressMask[id] === 1)) continue;
      const score = data[offset + id] as number;
      if (score > bestScore) {
        bestScore = score;
        best = id;
      }
    }
    return best;
  }
}

/**
 * The decoder's own keys/values grow each step; the cross-attention ones are computed on the
 * first step only (later steps return placeholders for them, as optimum's merged export does).
 */
function nextCache(outputs: Record<string, TensorData>, previous: Record<string, TensorData> | undefined): Record<string, TensorData> {
  const cache: Record<string, TensorData> = {};
  for (const [name, tensor] of Object.entries(outputs)) {
    if (!name.startsWith('present.')) continue;
    cache[name] = name.includes('.encoder.') && previous?.[name] ? previous[name] : tensor;
  }
  return cache;
}

function maskOf(ids: ReadonlySet<number>, size: number): Uint8Array {
  const mask = new Uint8Array(size);
  for (const id of ids) if (id >= 0 && id < size) mask[id] = 1;
  return mask;
}
