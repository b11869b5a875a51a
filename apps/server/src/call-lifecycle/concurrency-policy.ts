import type { AppConfig } from '@switchboard/config';
import type { ConcurrencyPolicy } from '@switchboard/persistence';

/** Nest token of the deployment's concurrency settings (MAX_CONCURRENT_CALLS_PER_ORG, MAX_CONCURRENT_CALLS_CAP). */
export const CONCURRENCY_POLICY = Symbol('CONCURRENCY_POLICY');

export function concurrencyPolicyOf(config: AppConfig): ConcurrencyPolicy {
  return { defaultLimit: config.calls.maxConcurrentPerOrg, cap: config.calls.maxConcurrentCap };
}
