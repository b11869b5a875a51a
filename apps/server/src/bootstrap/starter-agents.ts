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
export const STARTER_OPENAI_LLM_MODEL = 'gpt-4o-mini';
export const STARTER_OPENAI_STT_MODEL = 'whisper-1';

/**
 * The vault secret a newcomer stores their OpenAI key under (`npm run secrets -- set openai-api-key`):
 * an organization's own key, which the starter agent names like any agent config would.
 */
export const STARTER_OPENAI_SECRET_NAME = 'openai-api-key';

export const STARTER_LOCAL_AGENT_NAME = 'Assistant (local models)';
export const STARTER_OPENAI_AGENT_NAME = 'Assistant (OpenAI)';

/** The engines this deployment can run a pipeline agent on right now. */
export interface StarterEngineSources {
  /** An installed local Whisper model (catalog name). */
  localAsrModel?: string;
  /** An installed local LLM from the catalog (none is in the catalog today). */
  localLlmModel?: string;
  /** The operator's OPENAI_API_KEY is set (only ever sent to OpenAI's own endpoint). */
  openAiKey: boolean;
  /** The organization's vault holds an OpenAI key under STARTER_OPENAI_SECRET_NAME. */
  storedOpenAiKey?: boolean;
}

export type StarterAgentPlan =
  | { kind: 'agent'; name: string; config: Record<string, unknown>; engines: string }
  | { kind: 'missing'; hint: string };

/** Reads which engines are available from the model registry's report and the environment. */
export function starterEngineSources(statuses: readonly ModelStatus[], env: NodeJS.ProcessEnv = process.env, storedOpenAiKey = false): StarterEngineSources {
  const installed = (status: ModelStatus) => status.kind === 'hub' && status.state === 'installed';
  const localAsrModel = STARTER_LOCAL_ASR_MODELS.find((name) => statuses.some((status) => status.name === name && installed(status)));
  const localLlmModel = statuses.find((status) => status.task === 'llm' && installed(status))?.name;
  return {
    ...(localAsrModel ? { localAsrModel } : {}),
    ...(localLlmModel ? { localLlmModel } : {}),
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
    ? { provider: 'local', model: sources.localLlmModel }
    : openAiKey
      ? { provider: 'openai', model: STARTER_OPENAI_LLM_MODEL, ...openAiKey, temperature: 0.6 }
      : undefined;
  if (!stt || !llm) return { kind: 'missing', hint: missingHint(sources) };

  const allLocal = stt.provider === 'local' && llm.provider === 'local';
  const engines = [
    stt.provider === 'local' ? `local ${stt.model}` : `OpenAI ${stt.model}`,
    llm.provider === 'local' ? `local ${llm.model}` : `OpenAI ${llm.model}`,
    'the built-in Flite voice',
  ].join(', ');
  return {
    kind: 'agent',
    name: allLocal ? STARTER_LOCAL_AGENT_NAME : STARTER_OPENAI_AGENT_NAME,
    engines,
    config: {
      systemPrompt:
        'You are a friendly assistant on a voice call, made by Switchboard at its first start so its operator can try a conversation. ' +
        'Answer in one or two short sentences that sound natural when spoken. If the caller says goodbye, end the call.',
      firstMessage: "Hello! I'm your Switchboard assistant. What would you like to talk about?",
      language: 'en',
      stt,
      llm,
      tts: { provider: 'flite' },
      tools: [{ type: 'end_call' }],
    },
  };
}

function missingHint(sources: StarterEngineSources): string {
  const key = `set OPENAI_API_KEY (used with OpenAI's own endpoint only), or store your key with \`npm run secrets -- set ${STARTER_OPENAI_SECRET_NAME}\`, and restart`;
  if (sources.localAsrModel) {
    return `local speech recognition (${sources.localAsrModel}) is installed, but a pipeline agent also needs an LLM and no local LLM is installed: ${key}`;
  }
  return `a pipeline agent needs speech recognition and an LLM: ${key}; \`${STARTER_ASR_PULL_COMMAND}\` makes the speech recognition local`;
}
