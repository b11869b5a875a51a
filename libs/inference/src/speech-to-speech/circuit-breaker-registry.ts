import { CircuitBreakerPolicy, CircuitState, ConsecutiveBreaker, circuitBreaker, handleWhen } from 'cockatiel';
import { EngineError } from '../contracts/engine-error';

export interface CircuitBreakerSettings {
  /** Consecutive retryable failures (unreachable, 5xx, timeouts) that open the circuit. */
  consecutiveFailures: number;
  /** How long the circuit stays open before one trial connection is let through. */
  halfOpenAfterMs: number;
}

export const DEFAULT_CIRCUIT_BREAKER: Readonly<CircuitBreakerSettings> = { consecutiveFailures: 5, halfOpenAfterMs: 30_000 };

/**
 * One circuit breaker per remote endpoint (base URL), shared by every engine instance that talks
 * to it: when a provider is down, all agents using it should stop hammering it together, while
 * agents on another provider are unaffected. Only retryable EngineErrors count as failures; a bad
 * key or a bad request says nothing about the endpoint's health.
 */
export class CircuitBreakerRegistry {
  private readonly breakers = new Map<string, CircuitBreakerPolicy>();

  /** The breaker for `endpoint`; `settings` apply when it is first created. */
  forEndpoint(endpoint: string, settings: CircuitBreakerSettings = DEFAULT_CIRCUIT_BREAKER): CircuitBreakerPolicy {
    let breaker = this.breakers.get(endpoint);
    if (breaker === undefined) {
      breaker = circuitBreaker(
        handleWhen((error) => error instanceof EngineError && error.retryable),
        { breaker: new ConsecutiveBreaker(settings.consecutiveFailures), halfOpenAfter: settings.halfOpenAfterMs },
      );
      this.breakers.set(endpoint, breaker);
    }
    return breaker;
  }

  /** 'closed' | 'open' | 'half-open' | 'isolated', or undefined when nothing has used the endpoint. */
  stateOf(endpoint: string): 'closed' | 'open' | 'half-open' | 'isolated' | undefined {
    const breaker = this.breakers.get(endpoint);
    if (breaker === undefined) return undefined;
    switch (breaker.state) {
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
}

/** The process-wide registry engines use unless given their own (tests pass a fresh one). */
export const sharedCircuitBreakers = new CircuitBreakerRegistry();
