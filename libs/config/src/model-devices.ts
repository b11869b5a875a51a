/** The execution providers a model can be pinned to (INFERENCE_MODEL_DEVICES). */
export const MODEL_DEVICE_PROVIDERS = ['cpu', 'cuda', 'webgpu'] as const;
export type ModelDeviceProvider = (typeof MODEL_DEVICE_PROVIDERS)[number];

/**
 * `model=provider,model=provider` (e.g. `smart-turn-v3.2=cpu,whisper-base.en=webgpu`). Returns
 * the pins, or one problem per bad entry, each naming the entry (the value is no secret). Empty
 * entries (a trailing comma) are ignored.
 */
export function parseModelDevices(text: string): { pins: Record<string, ModelDeviceProvider> } | { problems: string[] } {
  // No prototype: a model named "constructor" or "__proto__" is a key like any other.
  const pins: Record<string, ModelDeviceProvider> = Object.create(null) as Record<string, ModelDeviceProvider>;
  const problems: string[] = [];
  for (const raw of text.split(',')) {
    const entry = raw.trim();
    if (entry === '') continue;
    const equals = entry.indexOf('=');
    if (equals < 0) {
      problems.push(`entry "${entry}" has no '=' (expected model=provider)`);
      continue;
    }
    const model = entry.slice(0, equals).trim();
    const provider = entry.slice(equals + 1).trim().toLowerCase();
    if (model === '') {
      problems.push(`entry "${entry}" has no model name before '='`);
    } else if (!(MODEL_DEVICE_PROVIDERS as readonly string[]).includes(provider)) {
      problems.push(`entry "${entry}": unknown provider "${provider}" (expected ${MODEL_DEVICE_PROVIDERS.join(', ')})`);
    } else if (Object.hasOwn(pins, model)) {
      problems.push(`model "${model}" is pinned more than once`);
    } else {
      pins[model] = provider as ModelDeviceProvider;
    }
  }
  return problems.length > 0 ? { problems } : { pins };
}
