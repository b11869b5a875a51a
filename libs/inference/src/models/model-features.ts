import type { ModelRegistry, ModelStatus } from './model-registry';

/** A capability the server offers when at least one of its models is present. */
export interface ModelFeature {
  id: string;
  label: string;
  /** Any one installed model turns the feature on; the first is the one to pull. */
  models: readonly string[];
  /** What the server does without it. */
  whenOff: string;
}

export const MODEL_FEATURES: readonly ModelFeature[] = [
  { id: 'vad', label: 'Voice activity detection (Silero VAD)', models: ['silero-vad'], whenOff: 'calls cannot detect speech' },
  { id: 'builtin-voice', label: 'Built-in voice (Flite)', models: ['flite'], whenOff: 'agents need a neural or remote voice' },
  {
    id: 'local-asr',
    label: 'Local speech recognition (Whisper, Moonshine)',
    models: ['whisper-base.en', 'whisper-tiny.en', 'moonshine-tiny'],
    whenOff: 'agents must use a remote transcription API',
  },
  { id: 'kokoro-voice', label: 'Local neural voice (Kokoro)', models: ['kokoro-82m-v1.0'], whenOff: 'agents use Flite, Piper or a remote voice' },
  { id: 'piper-voice', label: 'Local neural voice (Piper)', models: ['piper-en_US-lessac-medium'], whenOff: 'agents use Flite, Kokoro or a remote voice' },
  {
    id: 'local-llm',
    label: 'Local LLM (Qwen2.5)',
    models: ['qwen2.5-0.5b-instruct'],
    whenOff: 'agents need an OpenAI-compatible LLM: a provider key, or Ollama, llama.cpp or vLLM on this machine',
  },
  {
    id: 'end-of-turn',
    label: 'End-of-turn model (Smart Turn)',
    models: ['smart-turn-v3.2'],
    whenOff: 'turns end on VAD silence timing alone',
  },
];

export interface FeatureState {
  feature: ModelFeature;
  on: boolean;
  /** Installed (or built-in) models serving the feature. */
  activeModels: string[];
  /** Models of this feature that are present but broken. */
  corrupt: { name: string; problem: string }[];
  /** What to run to turn it on (absent when it is on), and the model it pulls. */
  command?: string;
  modelToPull?: string;
  /** Why it is off when a command cannot fix it (a built-in package missing). */
  reason?: string;
}

function formatMegabytes(bytes: number): string {
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}

function assessFeature(feature: ModelFeature, statuses: readonly ModelStatus[]): FeatureState | null {
  const relevant = feature.models
    .map((name) => statuses.find((status) => status.name === name))
    .filter((status): status is ModelStatus => status !== undefined);
  if (relevant.length === 0) return null;
  const activeModels = relevant.filter((status) => status.state === 'installed' || status.state === 'builtin').map((status) => status.name);
  const corrupt = relevant
    .filter((status) => status.state === 'corrupt')
    .map((status) => ({ name: status.name, problem: status.problem ?? 'corrupt' }));
  if (activeModels.length > 0) return { feature, on: true, activeModels, corrupt };

  const preferred = relevant[0] as ModelStatus;
  if (preferred.kind === 'builtin') return { feature, on: false, activeModels, corrupt, reason: preferred.problem ?? 'not installed' };
  const broken = corrupt.find((item) => item.name === preferred.name);
  const command = `npm run models -- pull ${preferred.name}${broken ? ' --force' : ''}`;
  return { feature, on: false, activeModels, corrupt, command, modelToPull: preferred.name };
}

/** Which model-backed features are on, which are off, and the command that turns each on. */
export async function assessModelFeatures(registry: ModelRegistry, features: readonly ModelFeature[] = MODEL_FEATURES): Promise<FeatureState[]> {
  const statuses = await registry.status();
  return features.map((feature) => assessFeature(feature, statuses)).filter((state): state is FeatureState => state !== null);
}

/**
 * Lines for the server's start-up log. The server starts without the optional models; these lines
 * say what that costs and how to get it back, e.g.
 *   off  Local speech recognition (Whisper, Moonshine): agents must use a remote transcription API.
 *        Turn on: npm run models -- pull whisper-base.en
 */
export async function describeModelFeatures(registry: ModelRegistry, features: readonly ModelFeature[] = MODEL_FEATURES): Promise<string[]> {
  const statuses = await registry.status();
  const lines = [`Model features (MODELS_DIR=${registry.modelsDir}):`];
  for (const feature of features) {
    const state = assessFeature(feature, statuses);
    if (state === null) continue;
    if (state.on) {
      const names = state.activeModels.map((name) => (statuses.find((status) => status.name === name)?.state === 'builtin' ? `${name} (built-in)` : name));
      lines.push(`  on   ${feature.label}: ${names.join(', ')}`);
    } else if (state.reason !== undefined) {
      lines.push(`  off  ${feature.label}: ${state.reason}`);
    } else {
      const partial = statuses.find((status) => status.name === state.modelToPull)?.partialBytes;
      const resume = partial ? ` (${formatMegabytes(partial)} already downloaded; the pull resumes)` : '';
      lines.push(`  off  ${feature.label}: ${feature.whenOff}. Turn on: ${state.command ?? ''}${resume}`);
    }
    for (const item of state.corrupt) lines.push(`       ${item.name} is corrupt (${item.problem}); fix: npm run models -- pull ${item.name} --force`);
  }
  return lines;
}
