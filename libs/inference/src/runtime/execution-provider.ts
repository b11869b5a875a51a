/**
 * Which onnxruntime execution provider the runtime, and each model, runs on. Pure decisions over
 * an injected probe, so every branch (including GPUs this machine lacks) can be tested.
 */
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { EngineError, type InferenceDevice } from '../contracts';

export type RequestedDevice = 'auto' | InferenceDevice;
export type GpuProvider = Exclude<InferenceDevice, 'cpu'>;

export const INFERENCE_DEVICES: readonly InferenceDevice[] = ['cpu', 'cuda', 'webgpu'];
export const PROVIDER_LABELS: Readonly<Record<InferenceDevice, string>> = { cpu: 'CPU', cuda: 'CUDA', webgpu: 'WebGPU' };

/** `auto` tries these in order and ends on CPU, which always works. */
const AUTO_CHAIN: readonly GpuProvider[] = ['cuda', 'webgpu'];

export interface ProviderProbeResult {
  available: boolean;
  /** Why not (the first line of onnxruntime's error, or the missing library), or what worked. */
  reason: string;
}

/** Whether a session can be created on a GPU provider here. */
export type ProviderProbe = (provider: GpuProvider) => Promise<ProviderProbeResult>;

export interface ProviderFallback {
  provider: InferenceDevice;
  reason: string;
}

export interface ProviderChoice {
  device: InferenceDevice;
  /** The providers tried and passed over, in order. */
  fallbacks: ProviderFallback[];
}

/** A model pinned to a provider it could not get, and where it runs instead. */
export interface ModelFallback {
  model: string;
  pinned: InferenceDevice;
  device: InferenceDevice;
  reason: string;
}

/**
 * The runtime's provider. `auto`: CUDA, then WebGPU, then CPU, with one warn line per provider
 * passed over. An explicit GPU that is unavailable is refused: an operator who asked for a GPU
 * must not silently get CPU (a capacity plan made for the GPU would be wrong by 10x).
 */
export async function chooseProvider(requested: RequestedDevice, probe: ProviderProbe, warn: (line: string) => void): Promise<ProviderChoice> {
  if (requested === 'cpu') return { device: 'cpu', fallbacks: [] };
  if (requested !== 'auto') {
    const result = await probe(requested);
    if (result.available) return { device: requested, fallbacks: [] };
    const label = PROVIDER_LABELS[requested];
    throw new EngineError('inference-runtime', 'unavailable', `${label} execution provider requested (device=${requested}) but not available: ${result.reason}`, false);
  }
  const fallbacks: ProviderFallback[] = [];
  for (const [index, provider] of AUTO_CHAIN.entries()) {
    const result = await probe(provider);
    if (result.available) return { device: provider, fallbacks };
    fallbacks.push({ provider, reason: result.reason });
    const next = AUTO_CHAIN[index + 1];
    warn(`inference: ${PROVIDER_LABELS[provider]} unavailable (${result.reason}): ${next ? `trying ${PROVIDER_LABELS[next]}` : 'using CPU'}`);
  }
  return { device: 'cpu', fallbacks };
}

/**
 * A pinned model's provider: its pin when that provider works here (probed on demand), else the
 * runtime's provider, with one warn line naming the model, the pin and the reason.
 */
export async function providerForModel(
  model: string,
  pinned: InferenceDevice,
  runtimeDevice: InferenceDevice,
  probe: ProviderProbe,
  warn: (line: string) => void,
): Promise<{ device: InferenceDevice; fallback?: ModelFallback }> {
  if (pinned === runtimeDevice || pinned === 'cpu') return { device: pinned };
  const result = await probe(pinned);
  if (result.available) return { device: pinned };
  warn(
    `inference: model '${model}' is pinned to ${PROVIDER_LABELS[pinned]}, but ${PROVIDER_LABELS[pinned]} is unavailable (${result.reason}): running it on ${PROVIDER_LABELS[runtimeDevice]}`,
  );
  return { device: runtimeDevice, fallback: { model, pinned, device: runtimeDevice, reason: result.reason } };
}

/**
 * The pin (INFERENCE_MODEL_DEVICES key) that applies to a model load. A key names a model as the
 * runtime does (`whisper:whisper-base.en/encoder`), without the engine prefix
 * (`whisper-base.en/encoder`), up to the `/` (`whisper-base.en`: encoder and decoder), or as its
 * folder in MODELS_DIR (the catalog name, `smart-turn-v3.2`, whatever file name it loads). The most
 * specific matching key wins.
 */
export function pinFor(
  spec: { name: string; path: string },
  pins: Readonly<Record<string, InferenceDevice>>,
  modelsDir?: string,
): { key: string; provider: InferenceDevice } | undefined {
  const found = settingFor(spec, pins, modelsDir);
  return found && { key: found.key, provider: found.value };
}

/** A per-model setting (a pin, a precision) keyed the way `pinFor` describes: the most specific key wins. */
export function settingFor<T>(spec: { name: string; path: string }, settings: Readonly<Record<string, T>>, modelsDir?: string): { key: string; value: T } | undefined {
  const unprefixed = withoutEnginePrefix(spec.name);
  const candidates = [spec.name, unprefixed, spec.name.split('/')[0]!, modelBaseName(spec.name)];
  const folder = modelsDir === undefined ? undefined : catalogFolderOf(spec.path, modelsDir);
  if (folder !== undefined) candidates.push(folder);
  for (const key of candidates) {
    if (Object.hasOwn(settings, key)) return { key, value: settings[key]! };
  }
  return undefined;
}

function withoutEnginePrefix(name: string): string {
  return name.replace(/^[^:/]+:/, '');
}

/** A model's name without its engine prefix and past its first `/` (`whisper:whisper-base.en/encoder` -> `whisper-base.en`). */
export function modelBaseName(name: string): string {
  return withoutEnginePrefix(name).split('/')[0]!;
}

/** The first folder of `path` under `modelsDir` (the model's name there), if it lies inside it. */
function catalogFolderOf(path: string, modelsDir: string): string | undefined {
  const inside = relative(resolve(modelsDir), resolve(path));
  if (inside === '' || inside.startsWith('..') || isAbsolute(inside)) return undefined;
  const [folder] = inside.split(sep);
  return folder || undefined;
}
