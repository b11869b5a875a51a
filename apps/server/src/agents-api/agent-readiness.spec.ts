import { parseAgentConfig, type AgentConfigInput } from '@switchboard/agent-config';
import type { ModelStatus } from '@switchboard/inference';
import type { InferenceService } from '../inference/inference.service';
import type { TenantOutbound } from '../outbound/outbound-guard.provider';
import type { SecretsService } from '../secrets/secrets.service';
import { AgentReadinessService, type AgentEngineKind } from './agent-readiness';

/** The server's state as readiness sees it: stored secret names, pulled models, hosts the guard refuses. */
function readinessWith(state: { secrets?: string[]; pulled?: string[]; refusedHosts?: string[] } = {}) {
  const catalog = [
    { name: 'whisper-base.en', task: 'asr' },
    { name: 'kokoro-82m-v1.0', task: 'tts' },
    { name: 'smart-turn-v3.2', task: 'end-of-turn' },
  ];
  const models = {
    catalog,
    catalogEntry: (name: string) => catalog.find((entry) => entry.name === name),
    statusOf: async (name: string): Promise<Partial<ModelStatus> | undefined> => ({ name, state: state.pulled?.includes(name) ? 'installed' : 'missing' }),
  };
  const check = (url: string) => (state.refusedHosts?.includes(new URL(url).hostname) ? { ok: false, reason: 'private address (set OUTBOUND_ALLOWED_HOSTS)' } : { ok: true });
  const service = new AgentReadinessService(
    { existingNames: async (_org: string, names: readonly string[]) => new Set(names.filter((name) => state.secrets?.includes(name))) } as unknown as SecretsService,
    { guard: { checkUrl: check, checkUrlResolved: async (url: string) => check(url) } } as unknown as TenantOutbound,
    { models } as unknown as InferenceService,
  );
  return (engine: AgentEngineKind, config: AgentConfigInput, env: NodeJS.ProcessEnv = {}) => service.check('org-1', engine, parseAgentConfig(config), { env });
}

const OWN_SERVER = 'http://10.0.0.5:8000/v1';

describe('AgentReadinessService', () => {
  it("reads a pipeline agent on OpenAI's endpoints with no key anywhere as not ready, at each engine's path", async () => {
    const readiness = await readinessWith()('pipeline', {});
    expect(readiness.ready).toBe(false);
    expect(readiness.problems.map((problem) => problem.path)).toEqual(['stt.apiKeySecret', 'llm.apiKeySecret']);
    expect(readiness.problems[0]!.message).toMatch(/https:\/\/api\.openai\.com\/v1 needs an API key: store yours with POST \/v1\/secrets/);
  });

  it('is ready once the key secrets it names are stored, and says which one is missing until then', async () => {
    const config = { stt: { apiKeySecret: 'openai' }, llm: { apiKeySecret: 'openai-llm' } };
    expect((await readinessWith({ secrets: ['openai'] })('pipeline', config)).problems).toEqual([
      { path: 'llm.apiKeySecret', message: 'no secret named "openai-llm" in this organization; create it with POST /v1/secrets' },
    ]);
    expect(await readinessWith({ secrets: ['openai', 'openai-llm'] })('pipeline', config)).toEqual({ ready: true, problems: [] });
  });

  it("takes the operator's key when the server has it, and names the variable when it does not", async () => {
    const config = { stt: { apiKeyEnv: 'OPENAI_API_KEY' as const }, llm: { apiKeyEnv: 'OPENAI_API_KEY' as const } };
    expect((await readinessWith()('pipeline', config, { OPENAI_API_KEY: 'sk-operator' })).ready).toBe(true);
    expect((await readinessWith()('pipeline', config)).problems[0]).toEqual({
      path: 'stt.apiKeyEnv',
      message: 'the operator has not set OPENAI_API_KEY on this server; store your own key with POST /v1/secrets and name it in apiKeySecret',
    });
  });

  it('needs no key for a server of your own, but does need the outbound rule to let the server reach it', async () => {
    const config = { stt: { baseUrl: OWN_SERVER }, llm: { baseUrl: OWN_SERVER } };
    expect((await readinessWith()('pipeline', config)).ready).toBe(true);
    const refused = await readinessWith({ refusedHosts: ['10.0.0.5'] })('pipeline', config);
    expect(refused.problems).toEqual([
      { path: 'stt.baseUrl', message: `${OWN_SERVER} cannot be reached from this server: private address (set OUTBOUND_ALLOWED_HOSTS)` },
      { path: 'llm.baseUrl', message: `${OWN_SERVER} cannot be reached from this server: private address (set OUTBOUND_ALLOWED_HOSTS)` },
    ]);
  });

  it('names an unknown local model with the ones there are, and a known one that is not pulled with the pull command', async () => {
    const check = readinessWith({ pulled: ['whisper-base.en'] });
    const unknown = await check('pipeline', { stt: { provider: 'local', model: 'whisper-1' }, llm: { baseUrl: OWN_SERVER } });
    expect(unknown.problems).toEqual([{ path: 'stt.model', message: '"whisper-1" is not a local asr model (local asr models: whisper-base.en; see npm run models -- list)' }]);
    const notPulled = await check('pipeline', { stt: { provider: 'local', model: 'whisper-base.en' }, llm: { baseUrl: OWN_SERVER }, tts: { provider: 'kokoro' }, turn: { endOfTurnModel: true } });
    expect(notPulled.problems).toEqual([
      { path: 'tts.model', message: 'the local model "kokoro-82m-v1.0" is not pulled on this server: run npm run models -- pull kokoro-82m-v1.0' },
      { path: 'turn.endOfTurnModel', message: 'the local model "smart-turn-v3.2" is not pulled on this server: run npm run models -- pull smart-turn-v3.2' },
    ]);
  });

  it('says so when the catalog has no local LLM at all', async () => {
    const readiness = await readinessWith()('pipeline', { stt: { baseUrl: OWN_SERVER }, llm: { provider: 'local', model: 'gpt-4o-mini' } });
    expect(readiness.problems).toEqual([
      { path: 'llm.model', message: '"gpt-4o-mini" is not a local llm model (the model catalog has no local llm model; use an OpenAI-compatible server (provider "openai" with a baseUrl); see npm run models -- list)' },
    ]);
  });

  it("checks a realtime agent's model endpoint, an analysis model, and webhook tools' signing secrets", async () => {
    const readiness = await readinessWith()('realtime', {
      analysis: { enabled: true, llm: { baseUrl: OWN_SERVER, apiKeySecret: 'analysis-key' } },
      tools: [{ type: 'webhook', name: 'lookup', description: 'Looks up an order.', url: 'https://example.com/lookup', signingSecret: 'lookup-signing' }],
    });
    expect(readiness.problems.map((problem) => problem.path)).toEqual(['realtime.apiKeySecret', 'analysis.llm.apiKeySecret', 'tools.0.signingSecret']);
  });

  it('reads an echo agent as ready whatever its config says about engines', async () => {
    expect(await readinessWith()('echo', {})).toEqual({ ready: true, problems: [] });
  });
});
