import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { OnnxGraphBuilder } from './onnx-graph-builder';
import { StandInLayers } from './stand-in-layers';
import type { StandInSize } from './whisper-dimensions';
import { audioEncoderBody, type AudioEncoderDimensions } from './whisper-encoder-graph';

/** 'realistic' is Smart Turn v3's backbone: a Whisper-tiny encoder (d 384, 6 heads, 4 layers). */
const SMART_TURN_DIMENSIONS: Record<StandInSize, AudioEncoderDimensions> = {
  small: { dModel: 32, heads: 2, layers: 1, ffnDim: 64, melBins: 80, positions: 400 },
  realistic: { dModel: 384, heads: 6, layers: 4, ffnDim: 1536, melBins: 80, positions: 400 },
};

/**
 * Writes a stand-in Smart Turn v3 classifier (one .onnx file, as pipecat-ai/smart-turn-v3 ships):
 *   input_features float32 [batch_size, 80, 800] (8 s of Whisper log-mel) -> logits float32 [batch_size, 1]
 * Like v3, the graph ends in a sigmoid: despite its name the output is already a probability.
 * Architecture: Whisper encoder body, mean over time, linear, sigmoid.
 */
export async function writeSmartTurnStandIn(path: string, options: { size?: StandInSize; seed?: number } = {}): Promise<void> {
  const dims = SMART_TURN_DIMENSIONS[options.size ?? 'small'];
  const graph = new OnnxGraphBuilder();
  const layers = new StandInLayers(graph, options.seed ?? 3);
  const features = graph.input('input_features', 'float32', ['batch_size', dims.melBins, dims.positions * 2]);
  const hidden = audioEncoderBody(layers, dims, features, 'encoder');
  const pooled = graph.node('ReduceMean', [hidden], { axes: { ints: [1] }, keepdims: { int: 0 } });
  const logit = layers.linear(pooled, dims.dModel, 1, 'classifier', true);
  const probability = graph.node('Sigmoid', [logit], {}, 'logits');
  graph.output(probability, 'float32', ['batch_size', 1]);
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, graph.toModelBytes('smart_turn'));
}
