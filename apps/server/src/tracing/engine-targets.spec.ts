import { parseAgentConfig } from '@switchboard/agent-config';
import { llmTarget, realtimeTarget, sttTarget, ttsTarget } from './engine-targets';

describe('engine targets (provider label and model)', () => {
  it("names OpenAI only for OpenAI's own endpoints, and any other endpoint custom, never its URL", () => {
    const config = parseAgentConfig({
      stt: { provider: 'openai', model: 'whisper-1' },
      llm: { provider: 'openai', model: 'llama-3.1-8b', baseUrl: 'https://llm.tenant.example.com/v1', apiKeySecret: 'key' },
      tts: { provider: 'openai', model: 'tts-1', baseUrl: 'https://api.openai.com/v1', apiKeySecret: 'key' },
      realtime: { url: 'wss://realtime.tenant.example.com/v1/realtime', apiKeySecret: 'key' },
    });
    expect(sttTarget(config.stt)).toEqual({ step: 'stt', provider: 'openai', model: 'whisper-1' });
    expect(llmTarget(config.llm)).toEqual({ step: 'llm', provider: 'custom', model: 'llama-3.1-8b' });
    expect(ttsTarget(config.tts)).toEqual({ step: 'tts', provider: 'openai', model: 'tts-1' });
    expect(realtimeTarget(config.realtime)).toEqual({ step: 'realtime', provider: 'custom', model: 'gpt-realtime' });
  });

  it('names local and built-in engines by their provider', () => {
    const config = parseAgentConfig({ stt: { provider: 'local', model: 'whisper-base' }, llm: { provider: 'local', model: 'qwen' }, tts: { provider: 'flite' } });
    expect(sttTarget(config.stt).provider).toBe('local');
    expect(llmTarget(config.llm).provider).toBe('local');
    expect(ttsTarget(config.tts)).toEqual({ step: 'tts', provider: 'flite', model: undefined });
    expect(ttsTarget({ ...config.tts, provider: 'piper' }).provider).toBe('piper');
  });
});
