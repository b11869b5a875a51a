import type { AgentConfig } from '@switchboard/conversation';
import { OpenAiRealtimeEngine, type SpeechToSpeechEngine } from '@switchboard/inference/speech-to-speech';
import { apiKeyFor, EngineCache } from './remote-engine-settings';
import type { CallUsageRegistry } from '../usage/call-usage-registry';
import { meterSpeechToSpeech } from '../usage/metered-engines';

/** Speech-to-speech engines for `realtime` agents, shared per endpoint, model and key. */
export class ServerRealtimeEngines {
  private readonly engines = new EngineCache<SpeechToSpeechEngine>();

  constructor(private readonly usage: CallUsageRegistry) {}

  resolve(config: AgentConfig): Promise<SpeechToSpeechEngine> {
    const realtime = config.realtime;
    return this.engines.get([realtime.url, realtime.model, realtime.apiKeyEnv], () => {
      const apiKey = apiKeyFor(realtime);
      if (!apiKey) throw new Error('realtime agent: set realtime.apiKeyEnv to the environment variable holding the API key');
      return meterSpeechToSpeech(new OpenAiRealtimeEngine({ apiKey, model: realtime.model, baseUrl: realtime.url, defaultVoice: realtime.voice }), this.usage);
    });
  }
}
