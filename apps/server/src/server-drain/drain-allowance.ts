import type { AppConfig } from '@switchboard/config';

/** After the drain's message was asked for: Twilio speaks it and stops the stream within this (or the call is ended here). */
export const DRAIN_MESSAGE_GRACE_MS = 20_000;

/**
 * The longest a drain can take. main.ts's own shutdown bound, the cluster primary's and an
 * orchestrator's grace period (terminationGracePeriodSeconds) must all be longer.
 */
export function drainAllowanceMs(config: Pick<AppConfig, 'drain'>): number {
  return config.drain.timeoutMs === 0 ? 0 : config.drain.timeoutMs + DRAIN_MESSAGE_GRACE_MS;
}
