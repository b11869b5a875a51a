import { OnnxGraphBuilder } from './onnx-graph-builder';
import { StandInLayers, type StandInPrecision } from './stand-in-layers';
import type { WhisperDimensions } from './whisper-dimensions';

/** What an audio encoder body needs: Whisper's encoder and Smart Turn's (a Whisper encoder too). */
export interface AudioEncoderDimensions {
  dModel: number;
  heads: number;
  layers: number;
  ffnDim: number;
  melBins: number;
  /** Positions after the stride-2 convolution: half the mel frames. */
  positions: number;
}

/**
 * Stand-in Whisper encoder with the real signature and the real architecture's shape: two 1-D
 * convolutions (the second with stride 2: 3000 mel frames -> 1500 positions), position
 * embeddings, pre-LayerNorm self-attention blocks and a final LayerNorm.
 *   input_features float32 [batch_size, 80, 3000] -> last_hidden_state float32 [batch_size, 1500, d_model]
 */
export function buildWhisperEncoder(dims: WhisperDimensions, seed: number, precision: StandInPrecision = 'fp32'): Uint8Array {
  const graph = new OnnxGraphBuilder();
  const layers = new StandInLayers(graph, seed, precision);
  const body = { dModel: dims.dModel, heads: dims.heads, layers: dims.encoderLayers, ffnDim: dims.ffnDim, melBins: dims.melBins, positions: dims.sourcePositions };
  const features = graph.input('input_features', 'float32', ['batch_size', dims.melBins, dims.sourcePositions * 2]);
  const hidden = graph.node('Identity', [audioEncoderBody(layers, body, features, 'encoder')], {}, 'last_hidden_state');
  graph.output(hidden, 'float32', ['batch_size', dims.sourcePositions, dims.dModel]);
  return graph.toModelBytes('whisper_encoder');
}

/** Log-mel [B, melBins, 2 * positions] -> hidden states [B, positions, dModel]. */
export function audioEncoderBody(layers: StandInLayers, dims: AudioEncoderDimensions, features: string, prefix: string): string {
  const graph = layers.graph;
  const { dModel, heads } = dims;
  const headDim = dModel / heads;
  const conv = (x: string, inChannels: number, stride: number, name: string): string =>
    graph.node('Tanh', [
      graph.node(
        'Conv',
        [x, layers.weight(`${name}.weight`, [dModel, inChannels, 3], 1 / Math.sqrt(inChannels * 3)), layers.weight(`${name}.bias`, [dModel], 0.02)],
        { kernel_shape: { ints: [3] }, pads: { ints: [1, 1] }, strides: { ints: [stride] } },
      ),
    ]);
  const convolved = conv(conv(features, dims.melBins, 1, `${prefix}.conv1`), dModel, 2, `${prefix}.conv2`);
  let hidden = graph.node('Add', [
    graph.node('Transpose', [convolved], { perm: { ints: [0, 2, 1] } }),
    layers.weight(`${prefix}.embed_positions.weight`, [dims.positions, dModel], 0.1),
  ]);
  for (let layer = 0; layer < dims.layers; layer++) {
    const name = `${prefix}.layers.${layer}`;
    const normed = layers.layerNorm(hidden, dModel, `${name}.self_attn_layer_norm`);
    const q = layers.splitHeads(layers.linear(normed, dModel, dModel, `${name}.self_attn.q_proj`), heads, headDim);
    const k = layers.splitHeads(layers.linear(normed, dModel, dModel, `${name}.self_attn.k_proj`, false), heads, headDim);
    const v = layers.splitHeads(layers.linear(normed, dModel, dModel, `${name}.self_attn.v_proj`), heads, headDim);
    const attended = layers.linear(layers.mergeHeads(layers.attention(q, k, v, headDim)), dModel, dModel, `${name}.self_attn.out_proj`);
    hidden = graph.node('Add', [hidden, attended]);
    const ffn = layers.feedForward(layers.layerNorm(hidden, dModel, `${name}.final_layer_norm`), dModel, dims.ffnDim, name);
    hidden = graph.node('Add', [hidden, ffn]);
  }
  return layers.layerNorm(hidden, dModel, `${prefix}.layer_norm`);
}
