import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { OnnxGraphBuilder } from './onnx-graph-builder';
import { SeededRandom } from './seeded-random';
import { StandInLayers } from './stand-in-layers';
import { IPA_SYMBOLS } from './tts-phoneme-symbols';
import { tokensToWaveform } from './tts-waveform-graph';
import type { StandInSize } from './whisper-dimensions';

const STYLE_DIM = 256;
const VOICE_ROWS = 510;
/** Kokoro's vocabulary has 178 token ids (n_token); the stand-in keeps the punctuation ids. */
const N_TOKEN = 178;

const KOKORO_DIMENSIONS: Record<StandInSize, { dim: number; layers: number; heads: number; samplesPerToken: number }> = {
  small: { dim: 32, layers: 0, heads: 2, samplesPerToken: 600 },
  realistic: { dim: 512, layers: 4, heads: 8, samplesPerToken: 1800 },
};

/**
 * Writes a stand-in Kokoro v1.0 folder in the onnx-community layout: onnx/model.onnx,
 * config.json (with the phoneme `vocab` and n_token, as hexgrad's), voices/af_heart.bin and
 * voices/am_adam.bin (float32 [510, 1, 256]).
 *   input_ids int64 [batch_size, sequence_length], style float32 [batch_size, 256], speed float32 [1]
 *   -> waveform float32 [1, num_samples] at 24 kHz
 * Each token yields a fixed stretch of samples shaped by the token and the style vector; `speed`
 * resamples the result to 1/speed of its length, like Kokoro's duration scaling.
 */
export async function writeKokoroStandIn(folder: string, options: { size?: StandInSize; seed?: number } = {}): Promise<void> {
  const dims = KOKORO_DIMENSIONS[options.size ?? 'small'];
  const seed = options.seed ?? 5;
  const graph = new OnnxGraphBuilder();
  const layers = new StandInLayers(graph, seed);
  const inputIds = graph.input('input_ids', 'int64', ['batch_size', 'sequence_length']);
  const style = graph.input('style', 'float32', ['batch_size', STYLE_DIM]);
  const speed = graph.input('speed', 'float32', [1]);

  const embedded = graph.node('Gather', [layers.weight('text_encoder.embedding.weight', [N_TOKEN, dims.dim], 1), inputIds]);
  const styled = graph.node('Unsqueeze', [layers.linear(style, STYLE_DIM, dims.dim, 'style_projection'), graph.int64Vector([1])]);
  let hidden = graph.node('Tanh', [graph.node('Add', [embedded, styled])]);
  for (let layer = 0; layer < dims.layers; layer++) {
    const name = `decoder.layers.${layer}`;
    const headDim = dims.dim / dims.heads;
    const normed = layers.layerNorm(hidden, dims.dim, `${name}.norm`);
    const q = layers.splitHeads(layers.linear(normed, dims.dim, dims.dim, `${name}.q`), dims.heads, headDim);
    const k = layers.splitHeads(layers.linear(normed, dims.dim, dims.dim, `${name}.k`), dims.heads, headDim);
    const v = layers.splitHeads(layers.linear(normed, dims.dim, dims.dim, `${name}.v`), dims.heads, headDim);
    hidden = graph.node('Add', [hidden, layers.mergeHeads(layers.attention(q, k, v, headDim))]);
    hidden = graph.node('Add', [hidden, layers.feedForward(layers.layerNorm(hidden, dims.dim, `${name}.ffn_norm`), dims.dim, dims.dim * 4, name)]);
  }
  const lengthFactor = graph.node('Div', [graph.floatTensor('one', [1], Float32Array.of(1)), speed]);
  const waveform3d = tokensToWaveform(layers, hidden, dims.dim, dims.samplesPerToken, lengthFactor, graph.floatScalar(0.5));
  const waveform = graph.node('Reshape', [waveform3d, graph.int64Vector([1, -1])], {}, 'waveform');
  graph.output(waveform, 'float32', [1, 'num_samples']);

  const vocab: Record<string, number> = { ';': 1, ':': 2, ',': 3, '.': 4, '!': 5, '?': 6, '—': 9, '…': 10, '"': 11, '(': 12, ')': 13, '“': 14, '”': 15, ' ': 16 };
  [...'abcdefghijklmnopqrstuvwxyz'].forEach((letter, i) => (vocab[letter] = 43 + i));
  IPA_SYMBOLS.forEach((symbol, i) => (vocab[symbol] ??= 69 + i));

  await mkdir(join(folder, 'onnx'), { recursive: true });
  await mkdir(join(folder, 'voices'), { recursive: true });
  await writeFile(join(folder, 'onnx', 'model.onnx'), graph.toModelBytes('kokoro'));
  await writeFile(join(folder, 'config.json'), `${JSON.stringify({ model_type: 'style_text_to_speech_2', n_token: N_TOKEN, vocab }, null, 2)}\n`);
  for (const [voice, voiceSeed] of [['af_heart', 11], ['am_adam', 12]] as const) {
    const rows = new SeededRandom(voiceSeed).normalArray(VOICE_ROWS * STYLE_DIM, 0.3);
    await writeFile(join(folder, 'voices', `${voice}.bin`), new Uint8Array(rows.buffer));
  }
}
