import { Registry } from 'prom-client';
import { EngineErrorMetrics, providerLabel } from './engine-error-metrics';
import type { MetricsRegistry } from './metrics.registry';

describe('switchboard_engine_errors_total', () => {
  it('counts failures by provider and step, with only known providers as label values', async () => {
    const registry = new Registry();
    const metrics = new EngineErrorMetrics({ registry } as unknown as MetricsRegistry);
    metrics.failed('llm', 'openai');
    metrics.failed('llm', 'openai');
    metrics.failed('tts', 'kokoro');
    // Anything that is not a provider the code knows (a host, a URL) becomes `custom`.
    metrics.failed('stt', 'https://llm.tenant.example.com/v1');
    metrics.failed('stt', 'api.groq.com');

    const text = await registry.metrics();
    expect(text).toContain('switchboard_engine_errors_total{provider="openai",step="llm"} 2');
    expect(text).toContain('switchboard_engine_errors_total{provider="kokoro",step="tts"} 1');
    expect(text).toContain('switchboard_engine_errors_total{provider="custom",step="stt"} 2');
    expect(text).not.toMatch(/tenant\.example|groq/);
  });

  it('maps names to label values', () => {
    expect(['openai', 'local', 'flite', 'kokoro', 'piper', 'webhook', 'custom'].map(providerLabel)).toEqual(['openai', 'local', 'flite', 'kokoro', 'piper', 'webhook', 'custom']);
    expect(providerLabel('OpenAI')).toBe('custom');
    expect(providerLabel('')).toBe('custom');
  });
});
