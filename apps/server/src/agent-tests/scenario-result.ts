import type { TurnResult } from './scenario-expectations';

/** One scenario's stored result (agent_test_runs.results[i]). */
export interface ScenarioResult {
  scenario: string;
  passed: boolean;
  /** The web call the scenario placed; null when none was placed (refused, or its audio failed). */
  callId: string | null;
  endReason: string | null;
  /** Why the scenario could not be judged (the call was refused, never started, ...); null otherwise. */
  error: string | null;
  turns: TurnResult[];
  /** The call's whole transcript, as recorded. */
  transcript: Array<{ role: string; source: string; text: string; heardText: string | null; interrupted: boolean; startMs: number }>;
}

export function scenarioError(scenario: string, error: string, callId: string | null = null): ScenarioResult {
  return { scenario, passed: false, callId, endReason: null, error, turns: [], transcript: [] };
}
