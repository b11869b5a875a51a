import { resolveModelPins } from './model-pins';

const models = [{ name: 'silero-vad' }, { name: 'flite' }, { name: 'whisper-base.en' }, { name: 'smart-turn-v3.2' }];

describe('resolveModelPins (INFERENCE_MODEL_DEVICES)', () => {
  it('pins the built-in VAD by its catalog name too, as it loads under another', () => {
    expect(resolveModelPins({ 'silero-vad': 'cpu' }, models)).toEqual({ pins: { 'silero-vad': 'cpu', 'silero-vad-v5': 'cpu' }, unknown: [] });
  });

  it('an explicit loaded-name pin wins over the alias', () => {
    expect(resolveModelPins({ 'silero-vad': 'cpu', 'silero-vad-v5': 'cuda' }, models).pins['silero-vad-v5']).toBe('cuda');
  });

  it('accepts catalog names, loaded names and names up to their /', () => {
    const pins = { 'whisper-base.en': 'webgpu', 'whisper:whisper-base.en/encoder': 'cpu', 'smart-turn-v3.2/model.onnx': 'cpu', 'silero-vad-v5': 'cpu' } as const;
    expect(resolveModelPins(pins, models).unknown).toEqual([]);
  });

  it('names every key that matches no model, so it is not ignored in silence', () => {
    expect(resolveModelPins({ 'whisper-small': 'cuda', 'smart-turn-v3.2': 'cpu', constructor: 'cpu' } as const, models).unknown).toEqual(['whisper-small', 'constructor']);
  });
});
