import { BrokenCircuitError, CircuitBreakerPolicy, CircuitState, ConsecutiveBreaker, circuitBreaker, handleWhen, IsolatedCircuitError } from 'cockatiel';
import { EngineError } from '../contracts';
import type { RemoteCircuitBreakerOptions } from './remote-policy-options';

export type CircuitStateName = 'closed' | 'open' | 'half-open' | 'isolated';

/**
 * One endpoint's breaker (cockatiel's ConsecutiveBreaker): it opens after N consecutive failed
 * attempts, fails fast while open, and after the cooldown lets one trial request through
 * (half-open) whose outcome closes or re-opens it. Only retryable EngineErrors count: a bad key or
 * a bad request says nothing about the server's health.
 */
export class EndpointCircuitBreaker {
  readonly policy: CircuitBreakerPolicy;
  private openedAtMs = 0;

  constructor(
    readonly key: string,
    readonly options: Readonly<RemoteCircuitBreakerOptions>,
  ) {
    this.policy = circuitBreaker(
      handleWhen((error) => error instanceof EngineError && error.retryable),
      { breaker: new ConsecutiveBreaker(options.consecutiveFailures), halfOpenAfter: options.halfOpenAfterMs },
    );
    this.policy.onBreak(() => {
      this.openedAtMs = Date.now();
    });
  }

  get state(): CircuitStateName {
    switch (this.policy.state) {
      case CircuitState.Closed:
        return 'closed';
      case CircuitState.Open:
        return 'open';
      case CircuitState.HalfOpen:
        return 'half-open';
      case CircuitState.Isolated:
        return 'isolated';
    }
  }

  /** Milliseconds until the breaker lets a trial request through (0 when it already would). */
  cooldownRemainingMs(nowMs = Date.now()): number {
    if (this.policy.state !== CircuitState.Open) return 0;
    return Math.max(0, this.openedAtMs + this.options.halfOpenAfterMs - nowMs);
  }

  /** The EngineError a caller sees when cockatiel refused the call because the circuit is open. */
  openError(engine: string, error: BrokenCircuitError | IsolatedCircuitError): EngineError {
    const retryAfterMs = this.cooldownRemainingMs();
    return new EngineError(
      engine,
      'circuit_open',
      `${engine}: circuit open for ${this.key} after ${this.options.consecutiveFailures} consecutive failures; next trial in ${retryAfterMs} ms`,
      true,
      { cause: error, retryAfterMs },
    );
  }
}

/**
 * One breaker per endpoint key, shared by every engine instance that talks to it: when a provider
 * is down every agent using it stops calling it together, while agents on another provider (or
 * another engine kind on the same provider) are unaffected. The HTTP engines key by
 * circuitKey(engine, canonical base URL); the OpenAI Realtime engine keys by its ws(s) base URL.
 * Every remote engine uses the one shared registry (sharedRemoteCircuitBreakers) by default.
 */
export class CircuitBreakerRegistry {
  private readonly breakers = new Map<string, EndpointCircuitBreaker>();

  /** The breaker for `key`; `options` apply when it is first created. */
  forEndpoint(key: string, options: Readonly<RemoteCircuitBreakerOptions>): EndpointCircuitBreaker {
    let breaker = this.breakers.get(key);
    if (breaker === undefined) {
      breaker = new EndpointCircuitBreaker(key, options);
      this.breakers.set(key, breaker);
    }
    return breaker;
  }

  /** For health reporting; undefined when nothing has used the endpoint. */
  stateOf(key: string): CircuitStateName | undefined {
    return this.breakers.get(key)?.state;
  }

  /** Every endpoint used so far and its breaker state. */
  snapshot(): Array<{ key: string; state: CircuitStateName }> {
    return [...this.breakers.values()].map((breaker) => ({ key: breaker.key, state: breaker.state }));
  }
}

/** The process-wide registry remote engines use unless given their own (tests pass a fresh one). */
export const sharedRemoteCircuitBreakers = new CircuitBreakerRegistry();

export function circuitKey(engine: string, canonicalBaseUrl: string): string {
  return `${engine} ${canonicalBaseUrl}`;
}

export function isCircuitRefusal(error: unknown): error is BrokenCircuitError | IsolatedCircuitError {
  return error instanceof BrokenCircuitError || error instanceof IsolatedCircuitError;
}
