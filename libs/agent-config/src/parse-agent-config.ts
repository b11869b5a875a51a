import { AgentConfigSchema, type AgentConfig } from './agent-config.schema';

export class AgentConfigError extends Error {
  override readonly name = 'AgentConfigError';
  constructor(readonly problems: { path: string; message: string }[]) {
    super(`invalid agent config: ${problems.map((problem) => `${problem.path || '(root)'}: ${problem.message}`).join('; ')}`);
  }
}

/** Validates a stored or submitted config and fills in every default. Throws AgentConfigError listing all problems. */
export function parseAgentConfig(input: unknown): AgentConfig {
  const parsed = AgentConfigSchema.safeParse(input ?? {});
  if (parsed.success) return parsed.data;
  throw new AgentConfigError(parsed.error.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message })));
}
