/** The execution providers a model can be pinned to (INFERENCE_MODEL_DEVICES). */
export const MODEL_DEVICE_PROVIDERS = ['cpu', 'cuda', 'webgpu'] as const;
export type ModelDeviceProvider = (typeof MODEL_DEVICE_PROVIDERS)[number];

/** The numeric variants a model can be loaded as (INFERENCE_MODEL_PRECISION). */
export const MODEL_PRECISION_CHOICES = ['fp32', 'fp16', 'int8'] as const;
export type ModelPrecisionChoice = (typeof MODEL_PRECISION_CHOICES)[number];

/**
 * `model=provider,model=provider` (e.g. `smart-turn-v3.2=cpu,whisper-base.en=webgpu`). Returns
 * the pins, or one problem per bad entry, each naming the entry (the value is no secret). Empty
 * entries (a trailing comma) are ignored.
 */
export function parseModelDevices(text: string): ParsedModelSettings<ModelDeviceProvider> {
  return parseModelSettings(text, MODEL_DEVICE_PROVIDERS, 'provider', 'pinned');
}

/** `model=precision,...` (e.g. `whisper-base.en=int8,kokoro-82m-v1.0=fp16`), as parseModelDevices. */
export function parseModelPrecisions(text: string): ParsedModelSettings<ModelPrecisionChoice> {
  return parseModelSettings(text, MODEL_PRECISION_CHOICES, 'precision', 'given a precision');
}

/** Per-model settings by model name, or one problem per bad entry. */
export type ParsedModelSettings<T extends string> = { settings: Record<string, T> } | { problems: string[] };

function parseModelSettings<T extends string>(
  text: string,
  allowed: readonly T[],
  label: string,
  repeated: string,
): ParsedModelSettings<T> {
  // No prototype: a model named "constructor" or "__proto__" is a key like any other.
  const settings: Record<string, T> = Object.create(null) as Record<string, T>;
  const problems: string[] = [];
  for (const raw of text.split(',')) {
    const entry = raw.trim();
    if (entry === '') continue;
    const equals = entry.indexOf('=');
    if (equals < 0) {
      problems.push(`entry "${entry}" has no '=' (expected model=${label})`);
      continue;
    }
    const model = entry.slice(0, equals).trim();
    const value = entry.slice(equals + 1).trim().toLowerCase();
    if (model === '') {
      problems.push(`entry "${entry}" has no model name before '='`);
    } else if (!(allowed as readonly string[]).includes(value)) {
      problems.push(`entry "${entry}": unknown ${label} "${value}" (expected ${allowed.join(', ')})`);
    } else if (Object.hasOwn(settings, model)) {
      problems.push(`model "${model}" is ${repeated} more than once`);
    } else {
      settings[model] = value as T;
    }
  }
  return problems.length > 0 ? { problems } : { settings };
}
