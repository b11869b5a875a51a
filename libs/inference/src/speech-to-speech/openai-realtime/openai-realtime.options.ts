import { EngineError } from '../../contracts/engine-error';
import { sharedRemoteCircuitBreakers, type CircuitBreakerRegistry } from '../../remote/circuit-breaker-registry';
import type { RemoteCircuitBreakerOptions } from '../../remote/remote-policy-options';
import type { RealtimeConnectionGuard } from './openai-realtime-socket';

export const OPENAI_REALTIME_ENGINE = 'openai-realtime';
export const OPENAI_REALTIME_DEFAULT_BASE_URL = 'wss://api.openai.com/v1/realtime';

/** A realtime session is long-lived, so a failing endpoint is left alone longer than an HTTP one. */
export const OPENAI_REALTIME_DEFAULT_CIRCUIT_BREAKER: Readonly<RemoteCircuitBreakerOptions> = Object.freeze({
  consecutiveFailures: 5,
  halfOpenAfterMs: 30_000,
});

/**
 * 'ga': the generally available protocol (session.type 'realtime', audio/pcmu, output_audio events).
 * 'beta': the preview protocol (OpenAI-Beta header, g711_ulaw, audio events), still served by some
 * OpenAI-compatible servers. Incoming events are accepted under either name whichever is chosen.
 */
export type OpenAiRealtimeProtocol = 'ga' | 'beta';

export interface OpenAiRealtimeEngineOptions {
  apiKey: string;
  /** e.g. 'gpt-realtime'; sent as the `model` query parameter. */
  model: string;
  /** ws(s) URL of the realtime endpoint, without query (tests point it at the local fake). */
  baseUrl?: string;
  protocol?: OpenAiRealtimeProtocol;
  /** 'mulaw8k' (default) passes telephone audio through untouched; 'pcm16_24k' is the API's PCM rate. */
  audioFormat?: 'mulaw8k' | 'pcm16_24k';
  /** Model that transcribes the caller (user transcripts); null turns caller transcription off. */
  inputTranscriptionModel?: string | null;
  /** Voice when the connect options name none. */
  defaultVoice?: string;
  /** Upgrade plus session configuration, per attempt. */
  connectTimeoutMs?: number;
  /** Attempts in all (first included) when connecting fails with a retryable error; exponential backoff between. */
  connectAttempts?: number;
  retryInitialDelayMs?: number;
  retryMaxDelayMs?: number;
  /** Applies when this base URL's breaker is first created; default OPENAI_REALTIME_DEFAULT_CIRCUIT_BREAKER. */
  circuitBreaker?: RemoteCircuitBreakerOptions;
  /** Breakers are shared per base URL; default: the process-wide registry every remote engine uses. */
  circuitBreakers?: CircuitBreakerRegistry;
  /** How long `close()` waits for the server's close frame before dropping the socket. */
  closeTimeoutMs?: number;
  /** The server's outbound guard (private addresses refused); none: connect anywhere the URL says. */
  connectionGuard?: RealtimeConnectionGuard;
}

export type ResolvedOpenAiRealtimeOptions = Required<Omit<OpenAiRealtimeEngineOptions, 'apiKey' | 'defaultVoice' | 'connectionGuard'>> & {
  defaultVoice: string | undefined;
  connectionGuard: RealtimeConnectionGuard | undefined;
};

/** Fills defaults and rejects unusable configuration with a non-retryable 'bad_request'. */
export function resolveOpenAiRealtimeOptions(options: OpenAiRealtimeEngineOptions): ResolvedOpenAiRealtimeOptions {
  const fail = (message: string): never => {
    throw new EngineError(OPENAI_REALTIME_ENGINE, 'bad_request', message, false);
  };
  if (typeof options.apiKey !== 'string' || options.apiKey.length === 0) fail('apiKey is required');
  if (typeof options.model !== 'string' || options.model.length === 0) fail('model is required');
  const baseUrl = options.baseUrl ?? OPENAI_REALTIME_DEFAULT_BASE_URL;
  let parsed: URL | undefined;
  try {
    parsed = new URL(baseUrl);
  } catch {
    fail(`baseUrl "${baseUrl}" is not a URL`);
  }
  if (parsed?.protocol !== 'ws:' && parsed?.protocol !== 'wss:') fail(`baseUrl must be a ws:// or wss:// URL, got "${baseUrl}"`);
  const resolved: ResolvedOpenAiRealtimeOptions = {
    model: options.model,
    baseUrl,
    protocol: options.protocol ?? 'ga',
    audioFormat: options.audioFormat ?? 'mulaw8k',
    inputTranscriptionModel: options.inputTranscriptionModel === undefined ? 'gpt-4o-mini-transcribe' : options.inputTranscriptionModel,
    defaultVoice: options.defaultVoice,
    connectTimeoutMs: options.connectTimeoutMs ?? 10_000,
    connectAttempts: options.connectAttempts ?? 3,
    retryInitialDelayMs: options.retryInitialDelayMs ?? 250,
    retryMaxDelayMs: options.retryMaxDelayMs ?? 2_000,
    circuitBreaker: options.circuitBreaker ?? OPENAI_REALTIME_DEFAULT_CIRCUIT_BREAKER,
    circuitBreakers: options.circuitBreakers ?? sharedRemoteCircuitBreakers,
    closeTimeoutMs: options.closeTimeoutMs ?? 1_000,
    connectionGuard: options.connectionGuard,
  };
  if (resolved.protocol !== 'ga' && resolved.protocol !== 'beta') fail(`protocol must be 'ga' or 'beta'`);
  if (resolved.audioFormat !== 'mulaw8k' && resolved.audioFormat !== 'pcm16_24k') fail(`audioFormat must be 'mulaw8k' or 'pcm16_24k'`);
  for (const key of ['connectTimeoutMs', 'retryInitialDelayMs', 'retryMaxDelayMs', 'closeTimeoutMs'] as const) {
    if (!(Number.isFinite(resolved[key]) && resolved[key] > 0)) fail(`${key} must be a positive number`);
  }
  if (!(Number.isInteger(resolved.connectAttempts) && resolved.connectAttempts >= 1)) fail('connectAttempts must be an integer >= 1');
  return resolved;
}
