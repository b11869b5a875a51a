import { parseAgentConfig } from '@switchboard/agent-config';
import type { ModelStatus } from '@switchboard/inference';
import { planStarterAgent, STARTER_ASR_PULL_COMMAND, starterEngineSources } from './starter-agents';

const status = (name: string, task: ModelStatus['task'], state: ModelStatus['state'], kind: ModelStatus['kind'] = 'hub'): ModelStatus => ({ name, task, kind, optional: true, state });

describe('the starter pipeline agent made at first run', () => {
  it('reads installed Whisper models (base before tiny), an installed catalog LLM and the operator key', () => {
    const statuses = [
      status('whisper-tiny.en', 'asr', 'installed'),
      status('whisper-base.en', 'asr', 'installed'),
      status('moonshine-tiny', 'asr', 'installed'),
      status('some-llm', 'llm', 'installed'),
    ];
    expect(starterEngineSources(statuses, { OPENAI_API_KEY: 'sk-x' })).toEqual({ localAsrModel: 'whisper-base.en', localLlmModel: 'some-llm', openAiKey: true });
  });

  it('ignores models that are missing, corrupt or outside the catalog, and an empty key', () => {
    const statuses = [
      status('whisper-base.en', 'asr', 'corrupt'),
      status('whisper-tiny.en', 'asr', 'missing'),
      status('my-llm', 'llm', 'installed', 'local'),
    ];
    expect(starterEngineSources(statuses, { OPENAI_API_KEY: ' ' })).toEqual({ openAiKey: false });
  });

  it('with nothing, makes no agent and says how to get one', () => {
    const plan = planStarterAgent({ openAiKey: false });
    expect(plan).toEqual({ kind: 'missing', hint: expect.stringContaining('set OPENAI_API_KEY') });
    expect(plan.kind === 'missing' && plan.hint).toContain(STARTER_ASR_PULL_COMMAND);
  });

  it('with local speech recognition only, says an LLM is missing rather than make an agent that cannot answer', () => {
    const plan = planStarterAgent({ localAsrModel: 'whisper-base.en', openAiKey: false });
    expect(plan.kind === 'missing' && plan.hint).toMatch(/whisper-base\.en\) is installed, but a pipeline agent also needs an LLM.*OPENAI_API_KEY/);
  });

  it('with the operator key, makes "Assistant (OpenAI)" on OpenAI\'s own endpoint and a valid config', () => {
    const plan = planStarterAgent({ openAiKey: true });
    if (plan.kind !== 'agent') throw new Error('expected an agent');
    expect(plan.name).toBe('Assistant (OpenAI)');
    const config = parseAgentConfig(plan.config);
    expect(config.stt).toMatchObject({ provider: 'openai', model: 'whisper-1', apiKeyEnv: 'OPENAI_API_KEY' });
    expect(config.stt.baseUrl).toBeUndefined();
    expect(config.llm).toMatchObject({ provider: 'openai', model: 'gpt-4o-mini', apiKeyEnv: 'OPENAI_API_KEY' });
    expect(config.tts.provider).toBe('flite');
  });

  it('with a key stored in the vault as openai-api-key (and no operator key), names the secret; the operator key wins when both exist', () => {
    expect(starterEngineSources([], {}, true)).toEqual({ openAiKey: false, storedOpenAiKey: true });
    const plan = planStarterAgent({ openAiKey: false, storedOpenAiKey: true });
    if (plan.kind !== 'agent') throw new Error('expected an agent');
    const config = parseAgentConfig(plan.config);
    expect(config.stt).toMatchObject({ provider: 'openai', apiKeySecret: 'openai-api-key' });
    expect(config.llm).toMatchObject({ provider: 'openai', model: 'gpt-4o-mini', apiKeySecret: 'openai-api-key' });
    expect(config.llm).not.toHaveProperty('apiKeyEnv');
    const both = planStarterAgent({ openAiKey: true, storedOpenAiKey: true });
    expect(both.kind === 'agent' && both.config.llm).toMatchObject({ apiKeyEnv: 'OPENAI_API_KEY' });
  });

  it('prefers local models: local Whisper with the key, and "Local assistant" when an LLM is local too', () => {
    const mixed = planStarterAgent({ localAsrModel: 'whisper-tiny.en', openAiKey: true });
    if (mixed.kind !== 'agent') throw new Error('expected an agent');
    expect(mixed.name).toBe('Assistant (OpenAI)');
    expect(mixed.engines).toBe('local whisper-tiny.en, OpenAI gpt-4o-mini, the built-in Flite voice');
    expect(parseAgentConfig(mixed.config).stt).toMatchObject({ provider: 'local', model: 'whisper-tiny.en' });

    const local = planStarterAgent({ localAsrModel: 'whisper-base.en', localLlmModel: 'some-llm', openAiKey: true });
    if (local.kind !== 'agent') throw new Error('expected an agent');
    expect(local.name).toBe('Local assistant');
    expect(parseAgentConfig(local.config).llm).toMatchObject({ provider: 'local', model: 'some-llm', temperature: 0.7 });
  });

  it('pulled speech recognition, LLM and voice, with espeak-ng: a "Local assistant" on them all, no key anywhere', () => {
    const statuses = [
      status('whisper-base.en', 'asr', 'installed'),
      status('qwen2.5-0.5b-instruct', 'llm', 'installed'),
      status('kokoro-82m-v1.0', 'tts', 'installed'),
      status('piper-en_US-lessac-medium', 'tts', 'installed'),
    ];
    const sources = starterEngineSources(statuses, {}, false, true);
    expect(sources.localVoice).toEqual({ provider: 'piper', model: 'piper-en_US-lessac-medium' });
    const plan = planStarterAgent(sources);
    if (plan.kind !== 'agent') throw new Error('expected an agent');
    expect(plan.name).toBe('Local assistant');
    expect(plan.engines).toBe('local whisper-base.en, local qwen2.5-0.5b-instruct, the local piper-en_US-lessac-medium voice');
    const config = parseAgentConfig(plan.config);
    expect(config.stt).toEqual({ provider: 'local', model: 'whisper-base.en' });
    expect(config.llm).toEqual({ provider: 'local', model: 'qwen2.5-0.5b-instruct', temperature: 0.7 });
    expect(config.tts).toEqual({ provider: 'piper', model: 'piper-en_US-lessac-medium' });
    expect(JSON.stringify(plan.config)).not.toMatch(/apiKey/);
  });

  it('a pulled voice without espeak-ng: Flite speaks, and the description says what the voice needs', () => {
    const statuses = [status('whisper-base.en', 'asr', 'installed'), status('qwen2.5-0.5b-instruct', 'llm', 'installed'), status('kokoro-82m-v1.0', 'tts', 'installed')];
    const plan = planStarterAgent(starterEngineSources(statuses, {}, false, false));
    if (plan.kind !== 'agent') throw new Error('expected an agent');
    expect(parseAgentConfig(plan.config).tts.provider).toBe('flite');
    expect(plan.engines).toMatch(/the built-in Flite voice \(kokoro-82m-v1\.0 is pulled but speaks only with espeak-ng installed: apt-get install espeak-ng/);
  });

  it('says which pull makes a keyless agent: the LLM after speech recognition, speech recognition after the LLM', () => {
    const asrOnly = planStarterAgent({ localAsrModel: 'whisper-base.en', openAiKey: false });
    expect(asrOnly.kind === 'missing' && asrOnly.hint).toContain('`npm run models -- pull qwen2.5-0.5b-instruct` and restart for a "Local assistant" that needs no key');
    const llmOnly = planStarterAgent({ localLlmModel: 'qwen2.5-0.5b-instruct', openAiKey: false });
    expect(llmOnly.kind === 'missing' && llmOnly.hint).toMatch(/a local LLM \(qwen2\.5-0\.5b-instruct\) is installed, but a pipeline agent also needs speech recognition: `npm run models -- pull whisper-base\.en`/);
  });
});
