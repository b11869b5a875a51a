export { resolveApiUrl, canonicalBaseUrl } from './api-url';
export { backoffDelayMs } from './backoff-delay';
export {
  CircuitBreakerRegistry,
  EndpointCircuitBreaker,
  sharedRemoteCircuitBreakers,
  circuitKey,
  type CircuitStateName,
} from './circuit-breaker-registry';
export { engineErrorFromResponse, engineErrorFromThrown, parseRetryAfterMs, redactSecret } from './http-error-mapping';
export { encodeMultipart, type MultipartBody, type MultipartFile } from './multipart-body';
export { RemoteAbortReason, type TimeoutPhase } from './remote-abort';
export { RemoteAttempt } from './remote-attempt';
export { RemoteHttpClient, DEFAULT_MAX_RESPONSE_BYTES, type RemoteEndpointOptions, type RemoteEngineLogger, type RemoteFetch, type RemoteRequestInit, type RemoteResponse, type AttemptOutcome } from './remote-http-client';
export { RemoteOperation } from './remote-operation';
export {
  DEFAULT_REMOTE_POLICY,
  resolveRemotePolicy,
  type RemotePolicyOptions,
  type RemotePolicyOverrides,
  type RemoteTimeouts,
  type RemoteRetryOptions,
  type RemoteCircuitBreakerOptions,
} from './remote-policy-options';
export { SseDecoder, type SseEvent } from './sse-decoder';
