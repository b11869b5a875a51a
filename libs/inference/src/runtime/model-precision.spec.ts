import { choosePrecision, precisionFallbackLine, variantPath } from './model-precision';

const PATH = '/models/whisper-base.en/onnx/encoder_model.onnx';
const files = (...names: string[]) => (path: string) => names.some((name) => path.endsWith(`/${name}`));

describe('choosePrecision (INFERENCE_MODEL_PRECISION: which file of a model loads)', () => {
  it('loads the fp32 file when nothing or fp32 is asked, without looking for variants', () => {
    const exists = jest.fn(() => true);
    expect(choosePrecision('m', PATH, undefined, 'cuda', exists)).toEqual({ path: PATH, precision: 'fp32' });
    expect(choosePrecision('m', PATH, 'fp32', 'cpu', exists)).toEqual({ path: PATH, precision: 'fp32' });
    expect(exists).not.toHaveBeenCalled();
  });

  it('loads the int8 variant on CPU, preferring _int8 over _quantized', () => {
    expect(choosePrecision('m', PATH, 'int8', 'cpu', files('encoder_model_int8.onnx', 'encoder_model_quantized.onnx')).path).toBe('/models/whisper-base.en/onnx/encoder_model_int8.onnx');
    expect(choosePrecision('m', PATH, 'int8', 'cpu', files('encoder_model_quantized.onnx'))).toEqual({
      path: '/models/whisper-base.en/onnx/encoder_model_quantized.onnx',
      precision: 'int8',
    });
  });

  it('loads the fp16 variant on CUDA and on WebGPU', () => {
    for (const device of ['cuda', 'webgpu'] as const) {
      expect(choosePrecision('m', PATH, 'fp16', device, files('encoder_model_fp16.onnx'))).toEqual({ path: '/models/whisper-base.en/onnx/encoder_model_fp16.onnx', precision: 'fp16' });
    }
  });

  it('falls back to fp32 where the provider does not run the variant as intended, saying why', () => {
    const everything = () => true;
    const fp16OnCpu = choosePrecision('whisper:base/encoder', PATH, 'fp16', 'cpu', everything);
    expect(fp16OnCpu.path).toBe(PATH);
    expect(fp16OnCpu.fallback).toEqual({ model: 'whisper:base/encoder', requested: 'fp16', precision: 'fp32', reason: expect.stringMatching(/^fp16 on CPU: .*casts to float32/) });
    for (const device of ['cuda', 'webgpu'] as const) {
      const int8OnGpu = choosePrecision('m', PATH, 'int8', device, everything);
      expect(int8OnGpu.precision).toBe('fp32');
      expect(int8OnGpu.fallback?.reason).toMatch(/dynamically quantized graphs are made for CPUs/);
    }
  });

  it('falls back to fp32 when the variant file is not there, naming the files it looked for', () => {
    const choice = choosePrecision('m', PATH, 'int8', 'cpu', () => false);
    expect(choice).toEqual({
      path: PATH,
      precision: 'fp32',
      fallback: { model: 'm', requested: 'int8', precision: 'fp32', reason: 'no int8 variant beside encoder_model.onnx (looked for encoder_model_int8.onnx, encoder_model_quantized.onnx)' },
    });
    expect(precisionFallbackLine(choice.fallback!, PATH)).toBe(
      "inference: model 'm' asks for int8 (INFERENCE_MODEL_PRECISION), but no int8 variant beside encoder_model.onnx (looked for encoder_model_int8.onnx, encoder_model_quantized.onnx): running encoder_model.onnx (fp32)",
    );
  });

  it('names variants as the Hub exports do', () => {
    expect(variantPath('/m/onnx/decoder_model_merged.onnx', '_fp16')).toBe('/m/onnx/decoder_model_merged_fp16.onnx');
    expect(variantPath('/m/voice.onnx', '_int8')).toBe('/m/voice_int8.onnx');
  });
});
