import { Injectable } from '@nestjs/common';
import { type AgentConfig, OPENAI_DEFAULT_BASE_URL, operatorKeyEndpointProblem } from '@switchboard/agent-config';
import type { ModelRegistry, ModelTask } from '@switchboard/inference';
import { InferenceService } from '../inference/inference.service';
import { TenantOutbound } from '../outbound/outbound-guard.provider';
import { SecretsService } from '../secrets/secrets.service';
import type { ConfigProblem } from './agent-config-validation';

/** Whether an agent can take a call now, and if not, every reason with the config path to fix. */
export interface AgentReadiness {
  ready: boolean;
  problems: ConfigProblem[];
}

export type AgentEngineKind = 'echo' | 'pipeline' | 'realtime';

/** OpenAI's own Realtime endpoint: the realtime agent's default. */
const OPENAI_REALTIME_URL = 'wss://api.openai.com/v1/realtime';

interface RemoteEndpoint {
  /** Config path of the engine section ('llm', 'analysis.llm', ...). */
  path: string;
  /** What the path calls the URL field ('baseUrl', or 'url' for the realtime model). */
  urlField: 'baseUrl' | 'url';
  url: string | undefined;
  defaultUrl: string;
  kind: 'http' | 'ws';
  apiKeySecret?: string;
  apiKeyEnv?: string;
}

interface LocalModel {
  path: string;
  name: string;
  task: ModelTask;
}

/**
 * An agent's readiness, from its config and this server's state: the keys its engines need
 * (OpenAI's own endpoints take none without one), the vault secrets it names, the local models it
 * runs (known to the catalog, pulled into MODELS_DIR), and the engine hosts the outbound guard lets
 * it reach. A config can be saved while it is not ready (a secret is often stored after the agent);
 * calls to it are refused with these problems instead of failing after they are answered.
 *
 * `resolveHosts: false` skips the DNS lookup of engine hosts (the voice webhook answers within a
 * deadline; a host that does not resolve then fails the call with its own error event).
 */
@Injectable()
export class AgentReadinessService {
  constructor(
    private readonly secrets: SecretsService,
    private readonly outbound: TenantOutbound,
    private readonly inference: InferenceService,
  ) {}

  async check(organizationId: string, engine: AgentEngineKind, config: AgentConfig, options: { resolveHosts?: boolean; env?: NodeJS.ProcessEnv } = {}): Promise<AgentReadiness> {
    const { endpoints, models } = needsOf(engine, config);
    const env = options.env ?? process.env;
    const problems = [
      ...endpoints.flatMap((endpoint) => keyProblems(endpoint, env)),
      ...(await this.secretProblems(organizationId, endpoints, engine === 'echo' ? [] : config.tools)),
      ...(await this.hostProblems(endpoints, options.resolveHosts ?? true)),
      ...(await modelProblems(this.inference.models, models)),
    ];
    return { ready: problems.length === 0, problems };
  }

  /** Every vault secret the agent names (engine keys, webhook tools' signing secrets) must exist. */
  private async secretProblems(organizationId: string, endpoints: RemoteEndpoint[], tools: AgentConfig['tools']): Promise<ConfigProblem[]> {
    const references = [
      ...endpoints.flatMap((endpoint) => (endpoint.apiKeySecret === undefined ? [] : [{ path: `${endpoint.path}.apiKeySecret`, name: endpoint.apiKeySecret }])),
      ...tools.flatMap((tool, index) => (tool.type === 'webhook' ? [{ path: `tools.${index}.signingSecret`, name: tool.signingSecret }] : [])),
    ];
    if (references.length === 0) return [];
    const existing = await this.secrets.existingNames(organizationId, references.map((reference) => reference.name));
    return references
      .filter((reference) => !existing.has(reference.name))
      .map((reference) => ({ path: reference.path, message: `no secret named "${reference.name}" in this organization; create it with POST /v1/secrets` }));
  }

  private async hostProblems(endpoints: RemoteEndpoint[], resolveHosts: boolean): Promise<ConfigProblem[]> {
    const checks = await Promise.all(
      endpoints.map(async (endpoint) => {
        const url = endpoint.url ?? endpoint.defaultUrl;
        const check = resolveHosts ? await this.outbound.guard.checkUrlResolved(url, endpoint.kind) : this.outbound.guard.checkUrl(url, endpoint.kind);
        return check.ok ? undefined : { path: `${endpoint.path}.${endpoint.urlField}`, message: `${url} cannot be reached from this server: ${check.reason}` };
      }),
    );
    return checks.filter((problem): problem is ConfigProblem => problem !== undefined);
  }
}

/** The remote endpoints and local models a call of this agent (and its analysis) uses. */
function needsOf(engine: AgentEngineKind, config: AgentConfig): { endpoints: RemoteEndpoint[]; models: LocalModel[] } {
  const endpoints: RemoteEndpoint[] = [];
  const models: LocalModel[] = [];
  const llm = (path: string, settings: AgentConfig['llm']) => {
    if (settings.provider === 'local') models.push({ path: `${path}.model`, name: settings.model, task: 'llm' });
    else endpoints.push(httpEndpoint(path, settings));
  };
  if (engine === 'pipeline') {
    if (config.stt.provider === 'local') models.push({ path: 'stt.model', name: config.stt.model, task: 'asr' });
    else endpoints.push(httpEndpoint('stt', config.stt));
    llm('llm', config.llm);
    const { tts } = config;
    if (tts.provider === 'openai') endpoints.push(httpEndpoint('tts', tts));
    if (tts.provider === 'kokoro') models.push({ path: 'tts.model', name: tts.model ?? 'kokoro-82m-v1.0', task: 'tts' });
    if (tts.provider === 'piper') models.push({ path: 'tts.model', name: tts.model ?? 'piper-en_US-lessac-medium', task: 'tts' });
    if (config.turn.endOfTurnModel) models.push({ path: 'turn.endOfTurnModel', name: 'smart-turn-v3.2', task: 'end-of-turn' });
  }
  if (engine === 'realtime') {
    const { realtime } = config;
    endpoints.push({ path: 'realtime', urlField: 'url', url: realtime.url, defaultUrl: OPENAI_REALTIME_URL, kind: 'ws', apiKeySecret: realtime.apiKeySecret, apiKeyEnv: realtime.apiKeyEnv });
  }
  if (config.analysis.enabled && engine !== 'echo') llm(config.analysis.llm ? 'analysis.llm' : 'llm', config.analysis.llm ?? config.llm);
  return { endpoints: dedupeEndpoints(endpoints), models };
}

function httpEndpoint(path: string, settings: { baseUrl?: string; apiKeySecret?: string; apiKeyEnv?: string }): RemoteEndpoint {
  return { path, urlField: 'baseUrl', url: settings.baseUrl, defaultUrl: OPENAI_DEFAULT_BASE_URL, kind: 'http', apiKeySecret: settings.apiKeySecret, apiKeyEnv: settings.apiKeyEnv };
}

/** The analysis falls back on the agent's own `llm`: one endpoint, checked and reported once. */
function dedupeEndpoints(endpoints: RemoteEndpoint[]): RemoteEndpoint[] {
  const seen = new Set<string>();
  return endpoints.filter((endpoint) => !seen.has(endpoint.path) && seen.add(endpoint.path));
}

/**
 * OpenAI's own endpoints answer nothing without a key; a server of the tenant's own (vLLM, Ollama,
 * a LAN box) may need none, so only the provider's endpoint is held to it. The operator's key must
 * be set where a config names it.
 */
function keyProblems(endpoint: RemoteEndpoint, env: NodeJS.ProcessEnv): ConfigProblem[] {
  if (endpoint.apiKeyEnv !== undefined) {
    const value = env[endpoint.apiKeyEnv];
    if (value === undefined || value.length === 0) {
      return [{ path: `${endpoint.path}.apiKeyEnv`, message: `the operator has not set ${endpoint.apiKeyEnv} on this server; store your own key with POST /v1/secrets and name it in apiKeySecret` }];
    }
    return [];
  }
  const ownEndpoint = endpoint.url === undefined || operatorKeyEndpointProblem(endpoint.url) === undefined;
  if (endpoint.apiKeySecret === undefined && ownEndpoint) {
    return [
      {
        path: `${endpoint.path}.apiKeySecret`,
        message: `${endpoint.url ?? endpoint.defaultUrl} needs an API key: store yours with POST /v1/secrets and name it in apiKeySecret, or point ${endpoint.urlField} at a server of your own (a local model server needs none)`,
      },
    ];
  }
  return [];
}

async function modelProblems(registry: ModelRegistry, models: LocalModel[]): Promise<ConfigProblem[]> {
  const problems = await Promise.all(models.map((model) => modelProblem(registry, model)));
  return problems.filter((problem): problem is ConfigProblem => problem !== undefined);
}

async function modelProblem(registry: ModelRegistry, model: LocalModel): Promise<ConfigProblem | undefined> {
  const entry = registry.catalogEntry(model.name);
  if (!entry || entry.task !== model.task) {
    const known = registry.catalog.filter((candidate) => candidate.task === model.task).map((candidate) => candidate.name);
    const choices = known.length > 0 ? `local ${model.task} models: ${known.join(', ')}` : `the model catalog has no local ${model.task} model; use an OpenAI-compatible server (provider "openai" with a baseUrl)`;
    return { path: model.path, message: `"${model.name}" is not a local ${model.task} model (${choices}; see npm run models -- list)` };
  }
  const status = await registry.statusOf(model.name);
  if (status?.state === 'installed' || status?.state === 'builtin') return undefined;
  const why = status?.state === 'corrupt' ? `is damaged (${status.problem ?? 'verify failed'})` : 'is not pulled on this server';
  return { path: model.path, message: `the local model "${model.name}" ${why}: run npm run models -- pull ${model.name}` };
}
