/**
 * How long a remote engine waits, how often it retries and when it stops calling a failing server.
 * Every engine takes these per agent; the defaults suit a live phone call, where a reply that comes
 * after several seconds is worth less than a quick failure the conversation can recover from.
 */
export interface RemoteTimeouts {
  /** Request start to response headers: TCP/TLS connect plus the server accepting the request. */
  connectTimeoutMs: number;
  /** Request start to the first output (first token, first audio bytes, the transcript body). */
  firstByteTimeoutMs: number;
  /** Longest silence between two body chunks once the response has started. */
  idleTimeoutMs: number;
  /** Whole operation, retries and backoff included. */
  totalTimeoutMs: number;
}

export interface RemoteRetryOptions {
  /** Retries after the first attempt (0: never retry). */
  maxRetries: number;
  /** First backoff delay; doubles per retry, with jitter. */
  initialDelayMs: number;
  maxDelayMs: number;
  /**
   * A server's Retry-After longer than this is not waited for: the error goes to the caller, who
   * can fall back rather than hold a caller in silence.
   */
  maxRetryAfterMs: number;
}

export interface RemoteCircuitBreakerOptions {
  /** Consecutive failed attempts (5xx, unreachable, timeouts, 429, malformed) that open it. */
  consecutiveFailures: number;
  /** How long it stays open before one trial request is let through (half-open). */
  halfOpenAfterMs: number;
}

export interface RemotePolicyOptions {
  timeouts: RemoteTimeouts;
  retry: RemoteRetryOptions;
  circuitBreaker: RemoteCircuitBreakerOptions;
}

/** Anything the caller leaves out takes the default. */
export interface RemotePolicyOverrides {
  timeouts?: Partial<RemoteTimeouts>;
  retry?: Partial<RemoteRetryOptions>;
  circuitBreaker?: Partial<RemoteCircuitBreakerOptions>;
}

export const DEFAULT_REMOTE_POLICY: Readonly<RemotePolicyOptions> = Object.freeze({
  timeouts: { connectTimeoutMs: 5_000, firstByteTimeoutMs: 10_000, idleTimeoutMs: 10_000, totalTimeoutMs: 60_000 },
  retry: { maxRetries: 2, initialDelayMs: 200, maxDelayMs: 2_000, maxRetryAfterMs: 5_000 },
  circuitBreaker: { consecutiveFailures: 5, halfOpenAfterMs: 15_000 },
});

/** `overrides` (per agent) over `engineDefaults` (per engine kind) over DEFAULT_REMOTE_POLICY. */
export function resolveRemotePolicy(overrides: RemotePolicyOverrides = {}, engineDefaults: RemotePolicyOverrides = {}): RemotePolicyOptions {
  const policy: RemotePolicyOptions = {
    timeouts: { ...DEFAULT_REMOTE_POLICY.timeouts, ...definedOnly(engineDefaults.timeouts), ...definedOnly(overrides.timeouts) },
    retry: { ...DEFAULT_REMOTE_POLICY.retry, ...definedOnly(engineDefaults.retry), ...definedOnly(overrides.retry) },
    circuitBreaker: {
      ...DEFAULT_REMOTE_POLICY.circuitBreaker,
      ...definedOnly(engineDefaults.circuitBreaker),
      ...definedOnly(overrides.circuitBreaker),
    },
  };
  for (const [group, values] of Object.entries(policy)) {
    for (const [name, value] of Object.entries(values as Record<string, number>)) {
      const mayBeZero = name === 'maxRetries' || name === 'maxRetryAfterMs' || name === 'initialDelayMs';
      if (!Number.isFinite(value) || value < 0 || (!mayBeZero && value === 0)) {
        throw new Error(`remote engine option ${group}.${name} must be a ${mayBeZero ? 'non-negative' : 'positive'} number, got ${value}`);
      }
    }
  }
  if (!Number.isInteger(policy.retry.maxRetries)) throw new Error(`retry.maxRetries must be an integer, got ${policy.retry.maxRetries}`);
  if (!Number.isInteger(policy.circuitBreaker.consecutiveFailures)) {
    throw new Error(`circuitBreaker.consecutiveFailures must be an integer, got ${policy.circuitBreaker.consecutiveFailures}`);
  }
  return policy;
}

function definedOnly<T extends object>(values: T | undefined): Partial<T> {
  if (values === undefined) return {};
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) as Partial<T>;
}
