import type { EngineCallContext } from '@switchboard/conversation';
import type { AgentConfig } from '@switchboard/agent-config';
import { observedSpeechToSpeech, OpenAiRealtimeEngine, type SpeechToSpeechEngine } from '@switchboard/inference';
import type { OutboundGuard } from '@switchboard/net';
import { EngineCache } from './remote-engine-settings';
import { EngineConfigError, type EngineCredentials } from './engine-credentials';
import type { CallUsageRegistry } from '../billing/usage-meters/call-usage-registry';
import type { EngineObserver } from '../tracing/engine-observer';
import { realtimeTarget } from '../tracing/engine-targets';
import { CallEngineObserver } from './call-engine-observer';

/**
 * Speech-to-speech engines for `realtime` agents, shared per endpoint, model and key. The socket
 * connects only where the outbound guard allows, with the call's organization's key (or the
 * operator's, for OpenAI's own endpoint).
 */
export class ServerRealtimeEngines {
  private readonly engines = new EngineCache<SpeechToSpeechEngine>();

  constructor(
    private readonly usage: CallUsageRegistry,
    private readonly credentials: EngineCredentials,
    private readonly outbound: OutboundGuard,
    private readonly observer: EngineObserver,
  ) {}

  async resolve(config: AgentConfig, call: EngineCallContext): Promise<SpeechToSpeechEngine> {
    const realtime = config.realtime;
    if (realtime.url !== undefined) {
      const check = this.outbound.checkUrl(realtime.url, 'ws');
      if (!check.ok) throw new EngineConfigError(`realtime.url refused: ${check.reason}`);
    }
    const key = await this.credentials.keyFor(call.organizationId, realtime, realtime.url);
    const apiKey = key.apiKey;
    if (!apiKey) throw new EngineConfigError('realtime agent: set realtime.apiKeySecret to the name of a secret holding the API key');
    const engine = await this.engines.get([realtime.url, realtime.model, key.cacheKey], () =>
      new OpenAiRealtimeEngine({
        apiKey,
        model: realtime.model,
        baseUrl: realtime.url,
        defaultVoice: realtime.voice,
        connectionGuard: {
          refusal: (url) => {
            const check = this.outbound.checkUrl(url, 'ws');
            return check.ok ? undefined : check.reason;
          },
          lookup: this.outbound.lookup,
        },
      }),
    );
    // The engine is shared; the call's one observer feeds its meter and its spans and failure counts.
    return observedSpeechToSpeech(engine, new CallEngineObserver({ realtime: realtimeTarget(realtime) }, this.observer, this.usage));
  }
}
