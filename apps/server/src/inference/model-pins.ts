import { type InferenceDevice, modelBaseName, type ModelStatus, SILERO_MODEL_NAME } from '@switchboard/inference';

/** The built-in VAD's catalog name ('silero-vad', what `models list` shows) and the name it loads as. */
const CATALOG_ALIASES: Readonly<Record<string, string>> = { 'silero-vad': SILERO_MODEL_NAME };

/**
 * INFERENCE_MODEL_DEVICES as the runtime applies it, and the keys that name no model here. A key
 * is a catalog name (as `models list` shows it), a loaded name (`silero-vad-v5`,
 * `whisper:whisper-base.en/encoder`), or one of those up to its `/`. A key that matches nothing
 * would pin nothing, silently: the operator is told at start instead.
 */
export function resolveModelPins(
  pins: Readonly<Record<string, InferenceDevice>>,
  models: readonly Pick<ModelStatus, 'name'>[],
): { pins: Record<string, InferenceDevice>; unknown: string[] } {
  const { settings, unknown } = resolveModelSettings(pins, models);
  return { pins: settings, unknown };
}

/** Any per-model setting keyed as INFERENCE_MODEL_DEVICES is (INFERENCE_MODEL_PRECISION too), resolved the same way. */
export function resolveModelSettings<T>(settings: Readonly<Record<string, T>>, models: readonly Pick<ModelStatus, 'name'>[]): { settings: Record<string, T>; unknown: string[] } {
  const known = new Set([...models.map((model) => model.name), SILERO_MODEL_NAME]);
  const resolved = Object.create(null) as Record<string, T>;
  const unknown: string[] = [];
  for (const [key, value] of Object.entries(settings)) {
    resolved[key] = value;
    const alias = CATALOG_ALIASES[key];
    if (alias !== undefined && !Object.hasOwn(settings, alias)) resolved[alias] = value;
    if (!known.has(modelBaseName(key))) unknown.push(key);
  }
  return { settings: resolved, unknown };
}
