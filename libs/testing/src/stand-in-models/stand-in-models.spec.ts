import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInferenceRuntime } from '@switchboard/inference';
import { buildStandInModels, type StandInModelPaths } from './build-stand-in-models';
import { onnxSignature } from './onnx-signature';
import { writeSmartTurnStandIn } from './smart-turn-stand-in';

describe('stand-in models (small)', () => {
  let dir: string;
  let paths: StandInModelPaths;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'stand-ins-'));
    paths = await buildStandInModels(dir);
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('writes the Whisper encoder with the optimum signature', async () => {
    expect(await onnxSignature(join(paths.whisper, 'onnx', 'encoder_model.onnx'))).toEqual({
      inputs: ['input_features float32 [batch_size, 80, 3000]'],
      outputs: ['last_hidden_state float32 [batch_size, 1500, 64]'],
    });
  });

  it('writes the merged Whisper decoder with past_key_values, use_cache_branch and present outputs', async () => {
    const vocab = (JSON.parse(await readFile(join(paths.whisper, 'config.json'), 'utf8')) as { vocab_size: number }).vocab_size;
    const past = (layer: number): string[] => [
      `past_key_values.${layer}.decoder.key float32 [batch_size, 2, past_decoder_sequence_length, 32]`,
      `past_key_values.${layer}.decoder.value float32 [batch_size, 2, past_decoder_sequence_length, 32]`,
      `past_key_values.${layer}.encoder.key float32 [batch_size, 2, encoder_sequence_length_out, 32]`,
      `past_key_values.${layer}.encoder.value float32 [batch_size, 2, encoder_sequence_length_out, 32]`,
    ];
    const present = (layer: number): string[] => [
      `present.${layer}.decoder.key float32 [batch_size, 2, past_decoder_sequence_length + decoder_sequence_length, 32]`,
      `present.${layer}.decoder.value float32 [batch_size, 2, past_decoder_sequence_length + decoder_sequence_length, 32]`,
      `present.${layer}.encoder.key float32 [batch_size, 2, encoder_sequence_length_out, 32]`,
      `present.${layer}.encoder.value float32 [batch_size, 2, encoder_sequence_length_out, 32]`,
    ];
    expect(await onnxSignature(join(paths.whisper, 'onnx', 'decoder_model_merged.onnx'))).toEqual({
      inputs: [
        'input_ids int64 [batch_size, decoder_sequence_length]',
        'encoder_hidden_states float32 [batch_size, encoder_sequence_length, 64]',
        ...past(0),
        ...past(1),
        'use_cache_branch bool [1]',
      ],
      outputs: [`logits float32 [batch_size, decoder_sequence_length, ${vocab}]`, ...present(0), ...present(1)],
    });
  });

  it('writes Kokoro with input_ids/style/speed -> waveform and [510, 1, 256] float32 voices', async () => {
    expect(await onnxSignature(join(paths.kokoro, 'onnx', 'model.onnx'))).toEqual({
      inputs: ['input_ids int64 [batch_size, sequence_length]', 'style float32 [batch_size, 256]', 'speed float32 [1]'],
      outputs: ['waveform float32 [1, num_samples]'],
    });
    const voice = await readFile(join(paths.kokoro, 'voices', 'af_heart.bin'));
    expect(voice.byteLength).toBe(510 * 1 * 256 * 4);
  });

  it('writes Piper with input/input_lengths/scales -> output [1, 1, 1, time] and its .onnx.json', async () => {
    expect(await onnxSignature(paths.piper)).toEqual({
      inputs: ['input int64 [batch_size, phonemes]', 'input_lengths int64 [batch_size]', 'scales float32 [3]'],
      outputs: ['output float32 [1, 1, 1, time]'],
    });
    const config = JSON.parse(await readFile(`${paths.piper}.json`, 'utf8'));
    expect(config.audio.sample_rate).toBe(22050);
    expect(config.phoneme_id_map).toMatchObject({ _: [0], '^': [1], $: [2], ' ': [3] });
    expect(Object.keys(config.inference).sort()).toEqual(['length_scale', 'noise_scale', 'noise_w']);
  });

  it('writes the Smart Turn classifier: input_features [batch, 80, 800] -> logits [batch, 1]', async () => {
    expect(await onnxSignature(paths.smartTurn)).toEqual({
      inputs: ['input_features float32 [batch_size, 80, 800]'],
      outputs: ['logits float32 [batch_size, 1]'],
    });
  });

  it('builds bit-identical files from the same seed and different weights from another', async () => {
    const again = join(dir, 'again.onnx');
    const otherSeed = join(dir, 'other-seed.onnx');
    await writeSmartTurnStandIn(again);
    await writeSmartTurnStandIn(otherSeed, { seed: 99 });
    const original = await readFile(paths.smartTurn);
    expect(Buffer.compare(await readFile(again), original)).toBe(0);
    expect(Buffer.compare(await readFile(otherSeed), original)).not.toBe(0);
  });

  it('runs in the real runtime: a batch of two gives each row its own probability in (0, 1)', async () => {
    const runtime = await createInferenceRuntime({ device: 'cpu', workers: 1, logger: { log: () => undefined, warn: () => undefined } });
    try {
      const model = await runtime.loadModel({ name: 'smart-turn-stand-in', path: paths.smartTurn });
      const features = new Float32Array(2 * 80 * 800);
      features.fill(-1.5, 0, 80 * 800);
      for (let i = 80 * 800; i < features.length; i++) features[i] = Math.sin(i / 37);
      const { outputs } = await model.run({ input_features: { type: 'float32', data: features, dims: [2, 80, 800] } });
      const logits = outputs['logits']!;
      expect(logits.dims).toEqual([2, 1]);
      const [first, second] = Array.from(logits.data as Float32Array);
      for (const p of [first!, second!]) expect(p > 0 && p < 1).toBe(true);
      expect(Math.abs(first! - second!)).toBeGreaterThan(1e-3);
    } finally {
      await runtime.close();
    }
  });
});
