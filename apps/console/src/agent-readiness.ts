import { ApiError, type AgentReadiness, type ConfigProblem } from './api';

/**
 * Whether an agent can take calls (`readiness` on GET /v1/agents, /v1/agents/:id and a save's
 * answer). A server that does not report readiness is taken at its word that calls work: a
 * missing field reads as ready.
 */
export function readinessOf(agent: { readiness?: AgentReadiness | null } | undefined): AgentReadiness {
  return agent?.readiness ?? { ready: true, problems: [] };
}

/** One problem as a line: "llm.apiKeySecret: no OpenAI key ..." (the config as a whole has no path). */
export function problemText(problem: ConfigProblem): string {
  return problem.path === '' ? problem.message : `${problem.path}: ${problem.message}`;
}

/** Why the agent cannot take calls, in one sentence. */
export function notReadyText(problems: readonly ConfigProblem[]): string {
  if (problems.length === 0) return 'This agent is not ready to take calls.';
  return `This agent is not ready to take calls: ${problems.map(problemText).join('; ')}.`.replace(/\.\.$/, '.');
}

/** The problems of a 409 `agent_not_ready` (a web call to an agent that cannot take it); undefined for any other failure. */
export function notReadyProblems(caught: unknown): ConfigProblem[] | undefined {
  if (!(caught instanceof ApiError) || caught.code !== 'agent_not_ready') return undefined;
  return caught.problems.length > 0 ? caught.problems : [{ path: '', message: caught.message }];
}
