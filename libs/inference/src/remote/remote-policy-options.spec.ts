import { DEFAULT_REMOTE_POLICY, resolveRemotePolicy } from './remote-policy-options';

describe('resolveRemotePolicy', () => {
  it('layers agent overrides over engine defaults over the global defaults, ignoring undefined', () => {
    const policy = resolveRemotePolicy(
      { timeouts: { idleTimeoutMs: 500, totalTimeoutMs: undefined }, retry: { maxRetries: 0 } },
      { timeouts: { connectTimeoutMs: 15_000, totalTimeoutMs: 30_000 } },
    );
    expect(policy.timeouts).toEqual({ connectTimeoutMs: 15_000, firstByteTimeoutMs: DEFAULT_REMOTE_POLICY.timeouts.firstByteTimeoutMs, idleTimeoutMs: 500, totalTimeoutMs: 30_000 });
    expect(policy.retry.maxRetries).toBe(0);
    expect(policy.circuitBreaker).toEqual(DEFAULT_REMOTE_POLICY.circuitBreaker);
  });

  it('refuses nonsense with the option named', () => {
    expect(() => resolveRemotePolicy({ timeouts: { idleTimeoutMs: 0 } })).toThrow('timeouts.idleTimeoutMs must be a positive number, got 0');
    expect(() => resolveRemotePolicy({ retry: { maxRetries: -1 } })).toThrow('retry.maxRetries must be a non-negative number');
    expect(() => resolveRemotePolicy({ retry: { maxRetries: 1.5 } })).toThrow('retry.maxRetries must be an integer');
    expect(() => resolveRemotePolicy({ circuitBreaker: { halfOpenAfterMs: Number.NaN } })).toThrow('circuitBreaker.halfOpenAfterMs');
  });
});
