import { Injectable } from '@nestjs/common';
import { Counter } from 'prom-client';
import { MetricsRegistry } from './metrics.registry';

/** Where in a call an engine request was made. */
export const ENGINE_STEPS = ['stt', 'llm', 'tts', 'realtime', 'tool'] as const;
export type EngineStep = (typeof ENGINE_STEPS)[number];

/**
 * The `provider` label's values: the providers an agent config can name, `webhook` for tool
 * endpoints, and `custom` for any endpoint of the tenant's choosing (an OpenAI-compatible server
 * that is not OpenAI's own). A URL or host never becomes a label: tenants pick those, so they
 * would be unbounded, and they are tenant data.
 */
export const ENGINE_PROVIDERS = ['openai', 'local', 'flite', 'kokoro', 'piper', 'webhook', 'custom'] as const;
export type EngineProvider = (typeof ENGINE_PROVIDERS)[number];

/** A provider name from elsewhere as a label value: a known one as it is, anything else `custom`. */
export function providerLabel(name: string): EngineProvider {
  return (ENGINE_PROVIDERS as readonly string[]).includes(name) ? (name as EngineProvider) : 'custom';
}

/**
 * Failed engine requests (HTTP error, timeout, refused or lost connection, an answer that could not
 * be read), by provider and step, so a provider outage shows as one rising series. A request the
 * call itself cancelled (barge-in, hang-up) is not a failure.
 */
@Injectable()
export class EngineErrorMetrics {
  private readonly errors: Counter<'provider' | 'step'>;

  constructor(metrics: MetricsRegistry) {
    this.errors = new Counter({
      name: 'switchboard_engine_errors_total',
      help: 'Engine requests that failed (HTTP error, timeout, connection error, unreadable answer), by provider (openai, local, flite, kokoro, piper, webhook, custom) and step (stt, llm, tts, realtime, tool).',
      labelNames: ['provider', 'step'],
      registers: [metrics.registry],
    });
  }

  failed(step: EngineStep, provider: string): void {
    this.errors.inc({ provider: providerLabel(provider), step });
  }
}
