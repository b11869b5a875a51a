/** The run as GET /v1/agents/{id}/tests/runs/{runId} answers it (the fields the report reads). */
export interface RunReportInput {
  id: string;
  suiteName: string;
  agentConfigVersion: number;
  status: 'running' | 'passed' | 'failed' | 'error';
  error: string | null;
  scenarioCount: number;
  results: Array<{
    scenario: string;
    passed: boolean;
    callId: string | null;
    error: string | null;
    turns: Array<{ said: string; heard: string; reply: string; failures: string[] }>;
  }>;
}

/**
 * A scenario run as a terminal report: one PASS/FAIL line per scenario, and for each failed turn
 * what the caller said, what the agent heard and replied, and each failed expectation.
 */
export function formatRunReport(run: RunReportInput): string[] {
  const lines = [`suite "${run.suiteName}" (agent config version ${run.agentConfigVersion}), run ${run.id}`];
  for (const result of run.results) {
    lines.push(`${result.passed ? 'PASS' : 'FAIL'}  ${result.scenario}${result.callId ? `  (call ${result.callId})` : ''}`);
    if (result.error) lines.push(`      error: ${result.error}`);
    result.turns.forEach((turn, index) => {
      if (turn.failures.length === 0) return;
      lines.push(`      turn ${index + 1}: "${turn.said}"`);
      lines.push(`        heard: ${turn.heard === '' ? '(nothing)' : turn.heard}`);
      lines.push(`        reply: ${turn.reply === '' ? '(nothing)' : turn.reply}`);
      for (const failure of turn.failures) lines.push(`        x ${failure}`);
    });
  }
  const notRun = run.scenarioCount - run.results.length;
  if (run.status === 'error') lines.push(`error: the run stopped: ${run.error ?? 'unknown reason'}${notRun > 0 ? ` (${notRun} scenarios not run)` : ''}`);
  const passed = run.results.filter((result) => result.passed).length;
  lines.push(`${passed} of ${run.scenarioCount} scenarios passed`);
  return lines;
}
