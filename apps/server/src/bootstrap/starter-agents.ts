import type { ModelStatus } from '@switchboard/inference';

/**
 * The pipeline agent a newcomer gets next to the echo agent, so the first "Talk" in the console can
 * be a conversation: made from whatever engines this deployment already has (pulled local models, the
 * operator's OPENAI_API_KEY), never from something that would fail at the first call.
 */

/** Local ASR models the server's local recogniser reads (Whisper family), preferred first. */
export const STARTER_LOCAL_ASR_MODELS = ['whisper-base.en', 'whisper-tiny.en'] as const;
/** What to pull for local speech recognition. */
export const STARTER_ASR_PULL_COMMAND = `npm run models -- pull ${STARTER_LOCAL_ASR_MODELS[0]}`;
/** What to pull for a local LLM: with local speech recognition, an agent that needs no key at all. */
export const STARTER_LLM_PULL_COMMAND = 'npm run models -- pull qwen2.5-0.5b-instruct';
/**
 * Local neural voices the starter agent speaks with when one is installed and espeak-ng runs (both
 * read phonemes from it), preferred first: Piper is the quicker of the two on a CPU.
 */
export const STARTER_LOCAL_VOICES = [
  { provider: 'piper', model: 'piper-en_US-lessac-medium' },
  { provider: 'kokoro', model: 'kokoro-82m-v1.0' },
] as const;
export type StarterLocalVoice = (typeof STARTER_LOCAL_VOICES)[number];
/** Qwen2.5's own sampling temperature (its generation_config.json); greedy decoding makes small models repeat. */
export const STARTER_LOCAL_LLM_TEMPERATURE = 0.7;
export const STARTER_OPENAI_LLM_MODEL = 'gpt-4o-mini';
export const STARTER_OPENAI_STT_MODEL = 'whisper-1';

/**
 * The vault secret a newcomer stores their OpenAI key under (`npm run secrets -- set openai-api-key`):
 * an organization's own key, which the starter agent names like any agent config would.
 */
export const STARTER_OPENAI_SECRET_NAME = 'openai-api-key';

export const STARTER_LOCAL_AGENT_NAME = 'Local assistant';
export const STARTER_OPENAI_AGENT_NAME = 'Assistant (OpenAI)';

/** The engines this deployment can run a pipeline agent on right now. */
export interface StarterEngineSources {
  /** An installed local Whisper model (catalog name). */
  localAsrModel?: string;
  /** An installed local LLM from the catalog. */
  localLlmModel?: string;
  /** An installed local neural voice, when espeak-ng (its phonemizer) runs here. */
  localVoice?: StarterLocalVoice;
  /** A neural voice is installed but espeak-ng does not run: the agent speaks with Flite, and says why. */
  voiceWithoutPhonemizer?: string;
  /** The operator's OPENAI_API_KEY is set (only ever sent to OpenAI's own endpoint). */
  openAiKey: boolean;
  /** The organization's vault holds an OpenAI key under STARTER_OPENAI_SECRET_NAME. */
  storedOpenAiKey?: boolean;
}

export type StarterAgentPlan =
  | { kind: 'agent'; name: string; config: Record<string, unknown>; engines: string }
  | { kind: 'missing'; hint: string };

/**
 * Reads which engines are available from the model registry's report and the environment;
 * `espeakRuns` says whether the espeak-ng program runs here (asked only when a neural voice is installed).
 */
export function starterEngineSources(statuses: readonly ModelStatus[], env: NodeJS.ProcessEnv = process.env, storedOpenAiKey = false, espeakRuns = false): StarterEngineSources {
  const installed = (status: ModelStatus) => status.kind === 'hub' && status.state === 'installed';
  const isInstalled = (name: string) => statuses.some((status) => status.name === name && installed(status));
  const localAsrModel = STARTER_LOCAL_ASR_MODELS.find(isInstalled);
  const localLlmModel = statuses.find((status) => status.task === 'llm' && installed(status))?.name;
  const voice = STARTER_LOCAL_VOICES.find((candidate) => isInstalled(candidate.model));
  return {
    ...(localAsrModel ? { localAsrModel } : {}),
    ...(localLlmModel ? { localLlmModel } : {}),
    ...(voice && espeakRuns ? { localVoice: voice } : {}),
    ...(voice && !espeakRuns ? { voiceWithoutPhonemizer: voice.model } : {}),
    openAiKey: (env['OPENAI_API_KEY'] ?? '').trim().length > 0,
    ...(storedOpenAiKey ? { storedOpenAiKey } : {}),
  };
}

/**
 * The starter pipeline agent's name and config (local engines first, then OpenAI's with the operator's
 * key; the built-in Flite voice either way), or what is missing and how to get it.
 */
export function planStarterAgent(sources: StarterEngineSources): StarterAgentPlan {
  // The operator's key first (it needs nothing stored), else the organization's own from the vault.
  const openAiKey = sources.openAiKey ? { apiKeyEnv: 'OPENAI_API_KEY' } : sources.storedOpenAiKey ? { apiKeySecret: STARTER_OPENAI_SECRET_NAME } : undefined;
  const stt = sources.localAsrModel
    ? { provider: 'local', model: sources.localAsrModel }
    : openAiKey
      ? { provider: 'openai', model: STARTER_OPENAI_STT_MODEL, ...openAiKey }
      : undefined;
  const llm = sources.localLlmModel
    ? { provider: 'local', model: sources.localLlmModel, temperature: STARTER_LOCAL_LLM_TEMPERATURE }
    : openAiKey
      ? { provider: 'openai', model: STARTER_OPENAI_LLM_MODEL, ...openAiKey, temperature: 0.6 }
      : undefined;
  if (!stt || !llm) return { kind: 'missing', hint: missingHint(sources) };

  const allLocal = stt.provider === 'local' && llm.provider === 'local';
  const voice = sources.localVoice;
  const engines = [
    stt.provider === 'local' ? `local ${stt.model}` : `OpenAI ${stt.model}`,
    llm.provider === 'local' ? `local ${llm.model}` : `OpenAI ${llm.model}`,
    voice ? `the local ${voice.model} voice` : 'the built-in Flite voice',
  ].join(', ');
  // Said where the agent is described, so an operator who pulled a voice knows why it is not used.
  const voiceNote = sources.voiceWithoutPhonemizer
    ? ` (${sources.voiceWithoutPhonemizer} is pulled but speaks only with espeak-ng installed: apt-get install espeak-ng, then make an agent with it)`
    : '';
  return {
    kind: 'agent',
    name: allLocal ? STARTER_LOCAL_AGENT_NAME : STARTER_OPENAI_AGENT_NAME,
    engines: `${engines}${voiceNote}`,
    config: {
      systemPrompt:
        'You are a friendly assistant on a voice call, made by Switchboard at its first start so its operator can try a conversation. ' +
        'Answer in one or two short sentences that sound natural when spoken. If the caller says goodbye, end the call.',
      firstMessage: "Hello! I'm your Switchboard assistant. What would you like to talk about?",
      language: 'en',
      stt,
      llm,
      tts: voice ? { provider: voice.provider, model: voice.model } : { provider: 'flite' },
      tools: [{ type: 'end_call' }],
    },
  };
}

function missingHint(sources: StarterEngineSources): string {
  const key = `set OPENAI_API_KEY (used with OpenAI's own endpoint only), or store your key with \`npm run secrets -- set ${STARTER_OPENAI_SECRET_NAME}\`, and restart`;
  if (sources.localAsrModel) {
    return `local speech recognition (${sources.localAsrModel}) is installed, but a pipeline agent also needs an LLM and no local LLM is installed: ${key}; or \`${STARTER_LLM_PULL_COMMAND}\` and restart for a "${STARTER_LOCAL_AGENT_NAME}" that needs no key`;
  }
  if (sources.localLlmModel) {
    return `a local LLM (${sources.localLlmModel}) is installed, but a pipeline agent also needs speech recognition: \`${STARTER_ASR_PULL_COMMAND}\` and restart for a "${STARTER_LOCAL_AGENT_NAME}" that needs no key; or ${key}`;
  }
  return `a pipeline agent needs speech recognition and an LLM: ${key}; \`${STARTER_ASR_PULL_COMMAND}\` makes the speech recognition local, and with \`${STARTER_LLM_PULL_COMMAND}\` too no key is needed`;
}
