import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { OnnxGraphBuilder } from './onnx-graph-builder';
import { StandInLayers } from './stand-in-layers';
import { IPA_SYMBOLS } from './tts-phoneme-symbols';
import { tokensToWaveform } from './tts-waveform-graph';
import type { StandInSize } from './whisper-dimensions';

const NUM_SYMBOLS = 256;
const PIPER_DIMENSIONS: Record<StandInSize, { dim: number; samplesPerToken: number }> = {
  small: { dim: 32, samplesPerToken: 256 },
  realistic: { dim: 192, samplesPerToken: 1024 },
};

export interface PiperStandInOptions {
  size?: StandInSize;
  seed?: number;
  /** Speakers; more than one adds the `sid` input and a speaker_id_map, as multi-speaker voices have. */
  speakers?: readonly string[];
  sampleRate?: number;
}

/**
 * Writes a stand-in Piper voice: `<path>` (.onnx) and `<path>.json`, with Piper's export signature:
 *   input int64 [batch_size, phonemes], input_lengths int64 [batch_size], scales float32 [3],
 *   (sid int64 [batch_size] when multi-speaker) -> output float32 [1, 1, 1, time]
 * The first input_lengths ids are used; scales[1] (length_scale) stretches the audio, scales[0]
 * (noise_scale) sets its level; there is no stochastic duration predictor, so noise_w does nothing.
 */
export async function writePiperStandIn(path: string, options: PiperStandInOptions = {}): Promise<void> {
  const dims = PIPER_DIMENSIONS[options.size ?? 'small'];
  const speakers = options.speakers ?? [];
  const multiSpeaker = speakers.length > 1;
  const graph = new OnnxGraphBuilder();
  const layers = new StandInLayers(graph, options.seed ?? 7);
  const input = graph.input('input', 'int64', ['batch_size', 'phonemes']);
  const inputLengths = graph.input('input_lengths', 'int64', ['batch_size']);
  const scales = graph.input('scales', 'float32', [3]);
  const sid = multiSpeaker ? graph.input('sid', 'int64', ['batch_size']) : undefined;

  const used = graph.node('Slice', [input, graph.int64Vector([0]), inputLengths, graph.int64Vector([1])]);
  let hidden = graph.node('Gather', [layers.weight('enc_p.emb.weight', [NUM_SYMBOLS, dims.dim], 1), used]);
  if (sid) {
    const speaker = graph.node('Gather', [layers.weight('emb_g.weight', [speakers.length, dims.dim], 1), sid]);
    hidden = graph.node('Add', [hidden, graph.node('Unsqueeze', [speaker, graph.int64Vector([1])])]);
  }
  hidden = graph.node('Tanh', [hidden]);
  const scale = (index: number): string => graph.node('Gather', [scales, graph.int64Vector([index])]);
  const amplitude = graph.node('Add', [graph.floatScalar(0.2), graph.node('Mul', [scale(0), graph.floatScalar(0.3)])]);
  const waveform = tokensToWaveform(layers, hidden, dims.dim, dims.samplesPerToken, scale(1), amplitude);
  const output = graph.node('Reshape', [waveform, graph.int64Vector([1, 1, 1, -1])], {}, 'output');
  graph.output(output, 'float32', [1, 1, 1, 'time']);

  const phonemeIdMap: Record<string, number[]> = { _: [0], '^': [1], $: [2], ' ': [3], '!': [4], "'": [5], '(': [6], ')': [7], ',': [8], '-': [9], '.': [10], ':': [11], ';': [12], '?': [13] };
  [...'abcdefghijklmnopqrstuvwxyz'].forEach((letter, i) => (phonemeIdMap[letter] = [14 + i]));
  IPA_SYMBOLS.forEach((symbol, i) => (phonemeIdMap[symbol] ??= [40 + i]));
  const config = {
    audio: { sample_rate: options.sampleRate ?? 22050, quality: 'medium' },
    espeak: { voice: 'en-us' },
    inference: { noise_scale: 0.667, length_scale: 1, noise_w: 0.8 },
    phoneme_type: 'espeak',
    phoneme_map: {},
    phoneme_id_map: phonemeIdMap,
    num_symbols: NUM_SYMBOLS,
    num_speakers: Math.max(1, speakers.length),
    speaker_id_map: multiSpeaker ? Object.fromEntries(speakers.map((speaker, i) => [speaker, i])) : {},
    piper_version: '1.0.0',
    language: { code: 'en_US' },
    dataset: 'switchboard-stand-in',
  };
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, graph.toModelBytes('piper'));
  await writeFile(`${path}.json`, `${JSON.stringify(config, null, 2)}\n`);
}
