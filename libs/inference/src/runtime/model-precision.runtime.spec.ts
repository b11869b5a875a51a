import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { readWav } from '@switchboard/audio';
import { LocalWhisperAsr } from '../asr/local';
import type { TensorData } from '../contracts';
import { LocalOnnxLlm } from '../llm/local';
import { WHISPER_DIMENSIONS, writeDecoderLlmStandIn, writeWhisperStandIn } from '@switchboard/testing';
import { createInferenceRuntime, type OnnxInferenceRuntime } from '.';

jest.setTimeout(60_000);

/**
 * INFERENCE_MODEL_PRECISION through the real runtime: the stand-ins' int8 variants are the same
 * weights dynamically quantized (DynamicQuantizeLinear + MatMulInteger), as the Hub's
 * `*_int8.onnx` files are.
 */
const FIXTURES = join(__dirname, '../../../../test/fixtures/speech');
const speech = (name: string): Int16Array => readWav(readFileSync(join(FIXTURES, `${name}.16k.wav`))).samples;

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let aa = 0;
  let bb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    aa += a[i]! * a[i]!;
    bb += b[i]! * b[i]!;
  }
  return dot / Math.sqrt(aa * bb);
}

describe('model precision variants (INFERENCE_MODEL_PRECISION) on the real runtime', () => {
  let dir: string;
  const warnings: string[] = [];
  const logger = { log: () => undefined, warn: (line: string) => void warnings.push(line) };
  let runtime: OnnxInferenceRuntime;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'precision-'));
    await writeWhisperStandIn(join(dir, 'whisper-q'), { int8: true });
    await writeWhisperStandIn(join(dir, 'whisper-plain'));
    await writeDecoderLlmStandIn(join(dir, 'llm-q'), { int8: true });
    runtime = await createInferenceRuntime({ device: 'cpu', workers: 1, logger, modelPrecisions: { 'whisper-q': 'int8', 'whisper-plain': 'int8', 'llm-q': 'int8' } });
  });

  afterAll(async () => {
    await runtime?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('runs the int8 files of a model that has them, and says so in the report', async () => {
    const asr = await LocalWhisperAsr.load({ runtime, modelDir: join(dir, 'whisper-q') });
    const { tokens } = await asr.transcribe(speech('hours'));
    expect(tokens.length).toBeGreaterThan(2);
    const report = runtime.providerReport();
    expect(report.precisions).toMatchObject({ 'whisper:whisper-q/encoder': 'int8', 'whisper:whisper-q/decoder': 'int8' });
    expect(report.precisionFallbacks.filter((fallback) => fallback.model.includes('whisper-q'))).toEqual([]);

    const llm = await LocalOnnxLlm.load({ runtime, modelDir: join(dir, 'llm-q') });
    let text = '';
    for await (const event of llm.stream({ callId: 'c', messages: [{ role: 'user', content: 'Where is my order?' }] })) {
      if (event.type === 'text') text += event.delta;
    }
    expect(text.length).toBeGreaterThan(0);
    expect(runtime.providerReport().precisions['local-llm:llm-q']).toBe('int8');
  });

  it('the int8 encoder is the fp32 one quantized: close outputs, not the same file', async () => {
    const dims = WHISPER_DIMENSIONS.small;
    const features: TensorData = { type: 'float32', data: Float32Array.from({ length: dims.melBins * dims.sourcePositions * 2 }, (_, i) => Math.sin(i / 7)), dims: [1, dims.melBins, dims.sourcePositions * 2] };
    const path = join(dir, 'whisper-q', 'onnx', 'encoder_model.onnx');
    // Named after its folder the setting applies; under another name it does not.
    const quantized = await runtime.loadModel({ name: 'whisper-q/encoder-check', path });
    const full = await runtime.loadModel({ name: 'fp32-check', path });
    const a = (await quantized.run({ input_features: features })).outputs['last_hidden_state']!.data as Float32Array;
    const b = (await full.run({ input_features: features })).outputs['last_hidden_state']!.data as Float32Array;
    expect(runtime.providerReport().precisions).toMatchObject({ 'whisper-q/encoder-check': 'int8', 'fp32-check': 'fp32' });
    expect(a).not.toEqual(b);
    expect(cosine(a, b)).toBeGreaterThan(0.99);
  });

  it('falls back to the fp32 files when the variant is not there, with one line per model', async () => {
    await LocalWhisperAsr.load({ runtime, modelDir: join(dir, 'whisper-plain') });
    const report = runtime.providerReport();
    expect(report.precisions['whisper:whisper-plain/encoder']).toBe('fp32');
    expect(report.precisionFallbacks).toContainEqual({
      model: 'whisper:whisper-plain/encoder',
      requested: 'int8',
      precision: 'fp32',
      reason: 'no int8 variant beside encoder_model.onnx (looked for encoder_model_int8.onnx, encoder_model_quantized.onnx)',
    });
    expect(warnings.filter((line) => line.includes("'whisper:whisper-plain/encoder'"))).toHaveLength(1);
  });

  it('refuses fp16 on the CPU provider (casts make it slower than fp32), running the fp32 file', async () => {
    const fp16Warnings: string[] = [];
    const cpu = await createInferenceRuntime({ device: 'cpu', workers: 1, logger: { log: () => undefined, warn: (line) => void fp16Warnings.push(line) }, modelPrecisions: { 'whisper-q': 'fp16' } });
    try {
      await LocalWhisperAsr.load({ runtime: cpu, modelDir: join(dir, 'whisper-q') });
      expect(cpu.providerReport().precisions['whisper:whisper-q/decoder']).toBe('fp32');
      expect(fp16Warnings).toContainEqual(expect.stringMatching(/model 'whisper:whisper-q\/decoder' asks for fp16 .*but fp16 on CPU: .*running decoder_model_merged\.onnx \(fp32\)/));
    } finally {
      await cpu.close();
    }
  });
});
