import { type AgentConfig, operatorKeyEndpointProblem } from '@switchboard/agent-config';
import type { EngineProvider } from '../metrics/engine-error-metrics';
import type { EngineTarget } from './engine-observer';

/** Model names come from tenant config: long enough for any real one, bounded all the same. */
const MAX_MODEL_CHARS = 128;

/**
 * An OpenAI-compatible engine's provider: `openai` on OpenAI's own endpoint (no URL, or one on its
 * origin), `custom` on any other (a tenant's vLLM, Groq, a proxy...). The URL itself never leaves.
 */
function remoteProvider(url: string | undefined): EngineProvider {
  return operatorKeyEndpointProblem(url) === undefined ? 'openai' : 'custom';
}

function model(name: string | undefined): string | undefined {
  return name === undefined ? undefined : name.slice(0, MAX_MODEL_CHARS);
}

export function sttTarget(stt: AgentConfig['stt']): EngineTarget {
  return { step: 'stt', provider: stt.provider === 'local' ? 'local' : remoteProvider(stt.baseUrl), model: model(stt.model) };
}

export function llmTarget(llm: AgentConfig['llm']): EngineTarget {
  return { step: 'llm', provider: llm.provider === 'local' ? 'local' : remoteProvider(llm.baseUrl), model: model(llm.model) };
}

export function ttsTarget(tts: AgentConfig['tts']): EngineTarget {
  return { step: 'tts', provider: tts.provider === 'openai' ? remoteProvider(tts.baseUrl) : tts.provider, model: model(tts.model) };
}

export function realtimeTarget(realtime: AgentConfig['realtime']): EngineTarget {
  return { step: 'realtime', provider: remoteProvider(realtime.url), model: model(realtime.model) };
}
