import type { ModelStatus } from '@switchboard/inference/models';
import type { InferenceDevice } from '@switchboard/inference/contracts';
import { modelBaseName } from '@switchboard/inference/runtime';
import { SILERO_MODEL_NAME } from '@switchboard/inference/vad';

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
  const known = new Set([...models.map((model) => model.name), SILERO_MODEL_NAME]);
  const resolved = Object.create(null) as Record<string, InferenceDevice>;
  const unknown: string[] = [];
  for (const [key, provider] of Object.entries(pins)) {
    resolved[key] = provider;
    const alias = CATALOG_ALIASES[key];
    if (alias !== undefined && !Object.hasOwn(pins, alias)) resolved[alias] = provider;
    if (!known.has(modelBaseName(key))) unknown.push(key);
  }
  return { pins: resolved, unknown };
}
