import { OnnxGraphBuilder } from './onnx-graph-builder';
import { StandInLayers, type StandInPrecision } from './stand-in-layers';

export interface DecoderLlmDimensions {
  layers: number;
  attentionHeads: number;
  kvHeads: number;
  headDim: number;
  hiddenSize: number;
  maxPositions: number;
  merges: number;
}

/** What the stand-in's logits are steered by (ids from the stand-in vocabulary). */
export interface DecoderLlmBehaviour {
  /** Logits width (config vocab_size, padded past the tokenizer's last id like real exports). */
  vocabSize: number;
  readableTokenIds: readonly number[];
  imStart: number;
  endOfTurn: number;
  /** The token whose presence in the context means tools were offered. */
  toolsMarker: number;
  /** Tokens from `<|im_start|>` to the end of the generation prompt (`<|im_start|>assistant\n`). */
  firstReplyStep: number;
  /** Text replies: tokens before the end-of-turn logit starts to climb. */
  textTokensBeforeEnd: number;
  /** The scripted reply when tools were offered (ends with end-of-turn after it). */
  toolReply: readonly number[];
}

const FLOAT = 1;
const INT64 = 7;
const BOOL = 9;

/**
 * A stand-in decoder-only chat LLM with optimum's `text-generation-with-past` signature:
 *   input_ids int64 [batch_size, sequence_length], attention_mask int64 [batch_size, past_sequence_length + 1],
 *   position_ids int64 [batch_size, sequence_length], past_key_values.{i}.key|value float32 [batch_size, kvHeads, past_sequence_length, headDim]
 *   -> logits float32 [batch_size, sequence_length, vocab], present.{i}.key|value float32 [batch_size, kvHeads, past_sequence_length + 1, headDim]
 * Each layer is causal attention over the cache and the new tokens (masked by attention_mask),
 * so decoding with the cache equals recomputing the whole sequence.
 *
 * Its replies are steered, deterministically, by the context. Layer 0's cached values carry two
 * marker channels (the position of every `<|im_start|>`, and whether the `<tool_call>` token was
 * seen), which give each position its step since the last `<|im_start|>`:
 * - tools offered (the tools system prompt contains `<tool_call>`): the scripted tool-call reply,
 *   token by token, then end-of-turn;
 * - otherwise: the network's own logits over readable tokens (prompt-dependent text) plus an
 *   end-of-turn ramp by step, so a reply ends after a few tokens.
 * Real chat models cache what they read the same way; here the markers make it exact.
 */
export function buildDecoderLlmGraph(dims: DecoderLlmDimensions, behaviour: DecoderLlmBehaviour, seed: number, precision: StandInPrecision = 'fp32'): Uint8Array {
  const graph = new OnnxGraphBuilder();
  const layers = new StandInLayers(graph, seed, precision);
  const { kvHeads, headDim, hiddenSize } = dims;
  const vocab = behaviour.vocabSize;
  const inputIds = graph.input('input_ids', 'int64', ['batch_size', 'sequence_length']);
  const attentionMask = graph.input('attention_mask', 'int64', ['batch_size', 'past_sequence_length + 1']);
  const positionIds = graph.input('position_ids', 'int64', ['batch_size', 'sequence_length']);
  const past = (layer: number, kind: 'key' | 'value'): string => `past_key_values.${layer}.${kind}`;
  for (let layer = 0; layer < dims.layers; layer++) {
    for (const kind of ['key', 'value'] as const) graph.input(past(layer, kind), 'float32', ['batch_size', kvHeads, 'past_sequence_length', headDim]);
  }

  // Causal mask over [past + new] keys, by index in the sequence (padding comes from attention_mask).
  const pastLength = graph.node('Gather', [graph.node('Shape', [past(0, 'key')]), graph.int64Scalar(2)]);
  const newLength = graph.node('Gather', [graph.node('Shape', [inputIds]), graph.int64Scalar(1)]);
  const totalLength = graph.node('Add', [pastLength, newLength]);
  const one = graph.int64Scalar(1);
  const queryIndexes = graph.node('Range', [pastLength, totalLength, one]);
  const keyIndexes = graph.node('Range', [graph.int64Scalar(0), totalLength, one]);
  const causal = graph.node('LessOrEqual', [graph.node('Unsqueeze', [keyIndexes, graph.int64Vector([0])]), graph.node('Unsqueeze', [queryIndexes, graph.int64Vector([1])])]);
  const keyAttended = graph.node('Cast', [graph.node('Unsqueeze', [attentionMask, graph.int64Vector([1])])], { to: { int: BOOL } });
  const allowed = graph.node('And', [graph.node('Unsqueeze', [causal, graph.int64Vector([0])]), keyAttended]); // [B, T, S]
  const allowedPerHead = graph.node('Unsqueeze', [allowed, graph.int64Vector([1])]); // [B, 1, T, S]

  const positions = graph.node('Cast', [positionIds], { to: { int: FLOAT } });
  const positionsPlusOne = graph.node('Add', [positions, graph.floatScalar(1)]);
  let hidden = graph.node('Add', [
    graph.node('Gather', [layers.weight('model.embed_tokens.weight', [vocab, hiddenSize], 1), inputIds]),
    graph.node('Gather', [layers.weight('stand_in.embed_positions.weight', [dims.maxPositions, hiddenSize], 0.5), positionIds]),
  ]);
  // Marker channels for the new tokens [B, T, 2]: (position + 1) of an <|im_start|>, and 1 for the tools marker.
  const imStartMarker = graph.node('Mul', [graph.node('Gather', [oneHot(graph, 'stand_in.im_start_marker', vocab, behaviour.imStart), inputIds]), positionsPlusOne]);
  const toolsMarker = graph.node('Gather', [oneHot(graph, 'stand_in.tools_marker', vocab, behaviour.toolsMarker), inputIds]);
  const markers = graph.node('Concat', [graph.node('Unsqueeze', [imStartMarker, graph.int64Vector([2])]), graph.node('Unsqueeze', [toolsMarker, graph.int64Vector([2])])], { axis: { int: 2 } });

  const width = kvHeads * headDim;
  let layerZeroValues = '';
  for (let layer = 0; layer < dims.layers; layer++) {
    const name = `model.layers.${layer}.self_attn`;
    const query = layers.splitHeads(layers.linear(hidden, hiddenSize, width, `${name}.q_proj`), kvHeads, headDim);
    const key = layers.splitHeads(layers.linear(hidden, hiddenSize, width, `${name}.k_proj`), kvHeads, headDim);
    const projected =
      layer === 0
        ? graph.node('Concat', [layers.linear(hidden, hiddenSize, width - 2, `${name}.v_proj`), markers], { axis: { int: 2 } })
        : layers.linear(hidden, hiddenSize, width, `${name}.v_proj`);
    const value = layers.splitHeads(projected, kvHeads, headDim);
    const presentKey = graph.node('Concat', [past(layer, 'key'), key], { axis: { int: 2 } }, `present.${layer}.key`);
    const presentValue = graph.node('Concat', [past(layer, 'value'), value], { axis: { int: 2 } }, `present.${layer}.value`);
    // The marker channels are bookkeeping, not content: zeroed before attention reads the values.
    const attendedValue = layer === 0 ? graph.node('Mul', [presentValue, markerChannelMask(graph, kvHeads, headDim)]) : presentValue;
    if (layer === 0) layerZeroValues = presentValue;
    const attended = layers.mergeHeads(layers.attention(query, presentKey, attendedValue, headDim, allowedPerHead));
    hidden = graph.node('Add', [hidden, layers.linear(attended, width, hiddenSize, `${name}.o_proj`)]);
  }

  // Read the markers back from the whole cache [B, S, 2], seen through each query's mask.
  const cachedMarkers = graph.node('Squeeze', [
    graph.node('Slice', [layerZeroValues, graph.int64Vector([kvHeads - 1, headDim - 2]), graph.int64Vector([kvHeads, headDim]), graph.int64Vector([1, 3])]),
    graph.int64Vector([1]),
  ]);
  const visibleMax = (channel: number): string =>
    graph.node(
      'ReduceMax',
      [graph.node('Where', [allowed, graph.node('Unsqueeze', [graph.node('Gather', [cachedMarkers, graph.int64Scalar(channel)], { axis: { int: 2 } }), graph.int64Vector([1])]), graph.floatScalar(0)])],
      { axes: { ints: [2] }, keepdims: { int: 0 } },
    );
  const lastImStart = visibleMax(0); // [B, T]: position + 1 of the latest <|im_start|>
  const toolsOffered = graph.node('Greater', [visibleMax(1), graph.floatScalar(0.5)]);
  const steps = stepTables(behaviour);
  const step = graph.node('Sub', [positionsPlusOne, lastImStart]);
  const stepIndex = graph.node('Cast', [graph.node('Min', [graph.node('Max', [step, graph.floatScalar(0)]), graph.floatScalar(steps.rows - 1)])], { to: { int: INT64 } });

  const normed = layers.layerNorm(hidden, hiddenSize, 'model.norm');
  const networkLogits = layers.project(normed, 'lm_head.weight', [hiddenSize, vocab], 3 / Math.sqrt(hiddenSize));
  const textLogits = graph.node('Add', [
    graph.node('Add', [networkLogits, graph.floatTensor('stand_in.readable_bias', [vocab], readableBias(behaviour))]),
    graph.node('Gather', [graph.floatTensor('stand_in.text_steps', [steps.rows, vocab], steps.text), stepIndex]),
  ]);
  const toolLogits = graph.node('Gather', [graph.floatTensor('stand_in.tool_steps', [steps.rows, vocab], steps.tool), stepIndex]);
  const logits = graph.node('Where', [graph.node('Unsqueeze', [toolsOffered, graph.int64Vector([2])]), toolLogits, textLogits], {}, 'logits');

  graph.output(logits, 'float32', ['batch_size', 'sequence_length', vocab]);
  for (let layer = 0; layer < dims.layers; layer++) {
    for (const kind of ['key', 'value'] as const) graph.output(`present.${layer}.${kind}`, 'float32', ['batch_size', kvHeads, 'past_sequence_length + 1', headDim]);
  }
  return graph.toModelBytes('decoder_llm_stand_in');
}

function oneHot(graph: OnnxGraphBuilder, name: string, size: number, id: number): string {
  const values = new Float32Array(size);
  values[id] = 1;
  return graph.floatTensor(name, [size], values);
}

/** 1 everywhere but the two marker channels (last head, last two channels). */
function markerChannelMask(graph: OnnxGraphBuilder, kvHeads: number, headDim: number): string {
  const mask = new Float32Array(kvHeads * headDim).fill(1);
  mask[kvHeads * headDim - 1] = 0;
  mask[kvHeads * headDim - 2] = 0;
  return graph.floatTensor('stand_in.marker_channel_mask', [1, kvHeads, 1, headDim], mask);
}

/** 0 for readable tokens, -30 for everything else (bytes that would print as mojibake, markup, padding ids). */
function readableBias(behaviour: DecoderLlmBehaviour): Float32Array {
  const bias = new Float32Array(behaviour.vocabSize).fill(-30);
  for (const id of behaviour.readableTokenIds) bias[id] = 0;
  bias[behaviour.endOfTurn] = 0;
  return bias;
}

/**
 * Per step since `<|im_start|>` (rows) and token (columns):
 * - text: an end-of-turn ramp of 3 per step, crossing 0 `textTokensBeforeEnd` tokens into the reply;
 * - tool: +50 on the script's token for its step, -50 elsewhere; end-of-turn after the script.
 * Steps past the last row use the last row (end-of-turn favoured in both).
 */
function stepTables(behaviour: DecoderLlmBehaviour): { rows: number; text: Float32Array; tool: Float32Array } {
  const { vocabSize, firstReplyStep, toolReply, endOfTurn } = behaviour;
  const rows = firstReplyStep + Math.max(toolReply.length, behaviour.textTokensBeforeEnd) + 16;
  const text = new Float32Array(rows * vocabSize);
  const tool = new Float32Array(rows * vocabSize).fill(-50);
  for (let row = 0; row < rows; row++) {
    text[row * vocabSize + endOfTurn] = (row - firstReplyStep - behaviour.textTokensBeforeEnd) * 3;
    const scripted = row >= firstReplyStep ? (toolReply[row - firstReplyStep] ?? endOfTurn) : endOfTurn;
    tool[row * vocabSize + scripted] = 50;
  }
  return { rows, text, tool };
}
