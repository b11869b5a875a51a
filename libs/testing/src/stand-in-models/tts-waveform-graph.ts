import type { OnnxGraphBuilder } from './onnx-graph-builder';
import type { StandInLayers } from './stand-in-layers';

/**
 * The shared tail of the TTS stand-ins: per-token hidden states [1, T, D] -> a fixed number of
 * samples per token (bounded by tanh), flattened, then resampled by linear interpolation to
 * `lengthFactor` times as many samples, the way a real model's duration control stretches speech.
 * Returns the waveform as [1, 1, N].
 */
export function tokensToWaveform(layers: StandInLayers, hidden: string, dim: number, samplesPerToken: number, lengthFactor: string, amplitude: string): string {
  const graph: OnnxGraphBuilder = layers.graph;
  const frames = graph.node('Mul', [graph.node('Tanh', [layers.linear(hidden, dim, samplesPerToken, 'vocoder.frames')]), amplitude]);
  const flat = graph.node('Reshape', [frames, graph.int64Vector([1, 1, -1])]);
  const samples = graph.node('Cast', [graph.node('Gather', [graph.node('Shape', [flat]), graph.int64Vector([2])])], { to: { int: 1 } });
  const stretched = graph.node('Cast', [graph.node('Floor', [graph.node('Mul', [samples, lengthFactor])])], { to: { int: 7 } });
  const sizes = graph.node('Concat', [graph.int64Vector([1, 1]), stretched], { axis: { int: 0 } });
  return graph.node('Resize', [flat, '', '', sizes], { mode: { string: 'linear' } });
}
