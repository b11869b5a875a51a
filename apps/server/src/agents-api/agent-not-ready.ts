import { ConflictException } from '@nestjs/common';
import type { ConfigProblem } from './agent-config-validation';

/** The end reason of a phone call refused because its agent is not ready, and the refusals' error code. */
export const AGENT_NOT_READY = 'agent_not_ready';

/** What a caller hears when the number's agent cannot take calls yet (a key or model missing). */
export const AGENT_NOT_READY_MESSAGE = 'Sorry, this line is not ready to take calls yet. Please try again later. Goodbye.';

/** 409: a call to an agent that cannot work now; `problems` say what to fix, with their config paths. */
export function agentNotReady(agentId: string, problems: ConfigProblem[]): ConflictException {
  const [first] = problems;
  const more = problems.length > 1 ? ` (and ${problems.length - 1} more)` : '';
  return new ConflictException({
    statusCode: 409,
    error: 'Conflict',
    code: AGENT_NOT_READY,
    message: `The agent ${agentId} is not ready to take calls: ${first ? `${first.path}: ${first.message}` : 'see problems'}${more}.`,
    problems,
  });
}
