import { OnnxGraphBuilder } from './onnx-graph-builder';
import { StandInLayers, type StandInPrecision } from './stand-in-layers';
import type { WhisperDimensions } from './whisper-dimensions';

/**
 * Stand-in Whisper decoder in the two layouts optimum exports:
 * - 'merged' (`decoder_model_merged.onnx`): input_ids int64 [batch_size, decoder_sequence_length],
 *   encoder_hidden_states, past_key_values.{i}.{decoder,encoder}.{key,value}, use_cache_branch bool[1]
 *   -> logits [batch_size, decoder_sequence_length, vocab] and present.{i}.{decoder,encoder}.{key,value}.
 *   Like the real export, an `If` on use_cache_branch either projects the encoder states into
 *   cross-attention keys/values (first step) or passes the cached ones through (later steps).
 * - 'no-cache' (`decoder_model.onnx`): input_ids and encoder_hidden_states only; the caller feeds
 *   the whole sequence each step.
 * Both use the same weights, so they decode to the same tokens. Self-attention is causal, so cached
 * and uncached decoding agree exactly (what the loader's tests check).
 */
export type WhisperDecoderVariant = 'merged' | 'no-cache';

export interface DecoderVocabulary {
  size: number;
  endOfText: number;
  /** Tokens the stand-in prefers (readable English bytes), so its text is printable. */
  readableTokenIds: readonly number[];
}

export function buildWhisperDecoder(
  dims: WhisperDimensions,
  vocabulary: DecoderVocabulary,
  seed: number,
  variant: WhisperDecoderVariant,
  precision: StandInPrecision = 'fp32',
): Uint8Array {
  const graph = new OnnxGraphBuilder();
  const layers = new StandInLayers(graph, seed, precision);
  const { dModel, heads, decoderLayers } = dims;
  const headDim = dModel / heads;
  const inputIds = graph.input('input_ids', 'int64', ['batch_size', 'decoder_sequence_length']);
  const encoderStates = graph.input('encoder_hidden_states', 'float32', ['batch_size', 'encoder_sequence_length', dModel]);
  const past = (layer: number, part: 'decoder' | 'encoder', kind: 'key' | 'value'): string => `past_key_values.${layer}.${part}.${kind}`;
  if (variant === 'merged') {
    for (let layer = 0; layer < decoderLayers; layer++) {
      for (const part of ['decoder', 'encoder'] as const) {
        const length = part === 'decoder' ? 'past_decoder_sequence_length' : 'encoder_sequence_length_out';
        for (const kind of ['key', 'value'] as const) graph.input(past(layer, part, kind), 'float32', ['batch_size', heads, length, headDim]);
      }
    }
    graph.input('use_cache_branch', 'bool', [1]);
  }

  // Positions of the new tokens: past_length .. past_length + T - 1.
  const pastLength =
    variant === 'merged'
      ? graph.node('Gather', [graph.node('Shape', [past(0, 'decoder', 'key')]), graph.int64Scalar(2)])
      : graph.int64Scalar(0);
  const newLength = graph.node('Gather', [graph.node('Shape', [inputIds]), graph.int64Scalar(1)]);
  const totalLength = graph.node('Add', [pastLength, newLength]);
  const one = graph.int64Scalar(1);
  const queryPositions = graph.node('Range', [pastLength, totalLength, one]);
  const keyPositions = graph.node('Range', [graph.int64Scalar(0), totalLength, one]);
  // Causal mask [T, past + T]: a token sees itself and everything before it.
  const allowed = graph.node('LessOrEqual', [
    graph.node('Unsqueeze', [keyPositions, graph.int64Vector([0])]),
    graph.node('Unsqueeze', [queryPositions, graph.int64Vector([1])]),
  ]);

  const embedTokens = layers.weight('decoder.embed_tokens.weight', [vocabulary.size, dModel], 1);
  let hidden = graph.node('Add', [
    graph.node('Gather', [embedTokens, inputIds]),
    graph.node('Gather', [layers.weight('decoder.embed_positions.weight', [dims.targetPositions, dModel], 0.5), queryPositions]),
  ]);

  const encoderKv = crossAttentionKeyValues(layers, dims, variant, encoderStates, past);
  const presents: Array<{ layer: number; decoderKey: string; decoderValue: string }> = [];
  for (let layer = 0; layer < decoderLayers; layer++) {
    const name = `decoder.layers.${layer}`;
    const normed = layers.layerNorm(hidden, dModel, `${name}.self_attn_layer_norm`);
    const q = layers.splitHeads(layers.linear(normed, dModel, dModel, `${name}.self_attn.q_proj`), heads, headDim);
    let k = layers.splitHeads(layers.linear(normed, dModel, dModel, `${name}.self_attn.k_proj`, false), heads, headDim);
    let v = layers.splitHeads(layers.linear(normed, dModel, dModel, `${name}.self_attn.v_proj`), heads, headDim);
    if (variant === 'merged') {
      k = graph.node('Concat', [past(layer, 'decoder', 'key'), k], { axis: { int: 2 } });
      v = graph.node('Concat', [past(layer, 'decoder', 'value'), v], { axis: { int: 2 } });
    }
    presents.push({ layer, decoderKey: k, decoderValue: v });
    const selfAttended = layers.mergeHeads(layers.attention(q, k, v, headDim, allowed));
    hidden = graph.node('Add', [hidden, layers.linear(selfAttended, dModel, dModel, `${name}.self_attn.out_proj`)]);

    const crossNormed = layers.layerNorm(hidden, dModel, `${name}.encoder_attn_layer_norm`);
    const crossQ = layers.splitHeads(layers.linear(crossNormed, dModel, dModel, `${name}.encoder_attn.q_proj`), heads, headDim);
    const { key, value } = encoderKv[layer] as { key: string; value: string };
    const crossAttended = layers.mergeHeads(layers.attention(crossQ, key, value, headDim));
    hidden = graph.node('Add', [hidden, layers.linear(crossAttended, dModel, dModel, `${name}.encoder_attn.out_proj`)]);

    const ffn = layers.feedForward(layers.layerNorm(hidden, dModel, `${name}.final_layer_norm`), dModel, dims.ffnDim, name);
    hidden = graph.node('Add', [hidden, ffn]);
  }

  // Real Whisper ties the output projection to the token embeddings; with random weights that
  // makes greedy decoding repeat its last token forever, so the stand-in has its own projection.
  const normed = layers.layerNorm(hidden, dModel, 'decoder.layer_norm');
  const projected = layers.project(normed, 'proj_out.weight', [dModel, vocabulary.size]);
  const logits = graph.node('Add', [graph.node('Add', [projected, readableBias(graph, vocabulary)]), endOfTextRamp(graph, dims, vocabulary, queryPositions)], {}, 'logits');
  graph.output(logits, 'float32', ['batch_size', 'decoder_sequence_length', vocabulary.size]);
  // optimum's output order: logits, then per layer decoder key/value, encoder key/value.
  for (const { layer, decoderKey, decoderValue } of presents) {
    const { key, value } = encoderKv[layer] as { key: string; value: string };
    const entries: Array<[string, string, string]> = [
      [decoderKey, 'decoder.key', 'past_decoder_sequence_length + decoder_sequence_length'],
      [decoderValue, 'decoder.value', 'past_decoder_sequence_length + decoder_sequence_length'],
      [key, 'encoder.key', 'encoder_sequence_length_out'],
      [value, 'encoder.value', 'encoder_sequence_length_out'],
    ];
    for (const [produced, part, length] of entries) {
      const name = graph.node('Identity', [produced], {}, `present.${layer}.${part}`);
      graph.output(name, 'float32', ['batch_size', heads, length, headDim]);
    }
  }
  return graph.toModelBytes(variant === 'merged' ? 'whisper_decoder_merged' : 'whisper_decoder');
}

/**
 * Per layer cross-attention keys/values [B, heads, S, headDim]. Merged: an If on use_cache_branch
 * computes them from the encoder states on the first step and passes the cached ones through after.
 */
function crossAttentionKeyValues(
  layers: StandInLayers,
  dims: WhisperDimensions,
  variant: WhisperDecoderVariant,
  encoderStates: string,
  past: (layer: number, part: 'decoder' | 'encoder', kind: 'key' | 'value') => string,
): Array<{ key: string; value: string }> {
  const headDim = dims.dModel / dims.heads;
  const project = (target: StandInLayers, layer: number): { key: string; value: string } => {
    const name = `decoder.layers.${layer}.encoder_attn`;
    return {
      key: target.splitHeads(target.linear(encoderStates, dims.dModel, dims.dModel, `${name}.k_proj`, false), dims.heads, headDim),
      value: target.splitHeads(target.linear(encoderStates, dims.dModel, dims.dModel, `${name}.v_proj`), dims.heads, headDim),
    };
  };
  const layerIndexes = Array.from({ length: dims.decoderLayers }, (_, layer) => layer);
  if (variant === 'no-cache') return layerIndexes.map((layer) => project(layers, layer));

  const graph = layers.graph;
  const withCache = graph.subgraph();
  const withoutCache = graph.subgraph();
  const computed = layerIndexes.map((layer) => project(layers.in(withoutCache), layer));
  for (const layer of layerIndexes) {
    for (const kind of ['key', 'value'] as const) {
      withCache.output(withCache.node('Identity', [past(layer, 'encoder', kind)]), 'float32');
      withoutCache.output((computed[layer] as { key: string; value: string })[kind], 'float32');
    }
  }
  const outputs = graph.nodeOutputs('If', ['use_cache_branch'], dims.decoderLayers * 2, {
    then_branch: { graph: withCache.toGraph('with_cache') },
    else_branch: { graph: withoutCache.toGraph('without_cache') },
  });
  return layerIndexes.map((layer) => ({ key: outputs[layer * 2] as string, value: outputs[layer * 2 + 1] as string }));
}

/** 0 for readable tokens, -30 for other regular tokens (stray bytes would print as mojibake). */
function readableBias(graph: OnnxGraphBuilder, vocabulary: DecoderVocabulary): string {
  const bias = new Float32Array(vocabulary.size);
  bias.fill(-30, 0, vocabulary.endOfText);
  for (const id of vocabulary.readableTokenIds) bias[id] = 0;
  return graph.floatTensor('stand_in.readable_bias', [vocabulary.size], bias);
}

/**
 * Adds (position - endOfTextAfterPosition) * 0.6 to the end-of-text logit, so a greedy decode ends
 * after a short, audio-dependent number of tokens, as a real transcript of a short utterance would.
 */
function endOfTextRamp(graph: OnnxGraphBuilder, dims: WhisperDimensions, vocabulary: DecoderVocabulary, positions: string): string {
  const ramp = new Float32Array(dims.targetPositions);
  for (let p = 0; p < ramp.length; p++) ramp[p] = (p - dims.endOfTextAfterPosition) * 0.6;
  const oneHot = new Float32Array(vocabulary.size);
  oneHot[vocabulary.endOfText] = 1;
  const rampAt = graph.node('Gather', [graph.floatTensor('stand_in.eot_ramp', [dims.targetPositions, 1], ramp), positions]);
  return graph.node('Mul', [rampAt, graph.floatTensor('stand_in.eot_one_hot', [vocabulary.size], oneHot)]);
}
