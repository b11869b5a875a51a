import { NotFoundException } from '@nestjs/common';
import type { AgentRecord } from '@switchboard/persistence';
import type { AgentReadiness } from './agent-readiness';

/** An agent as listed: without its config, which can be large, with whether it can take calls. */
export function agentSummary(agent: AgentRecord, readiness: AgentReadiness) {
  return {
    id: agent.id,
    name: agent.name,
    engine: agent.engine,
    version: agent.currentVersion,
    readiness,
    createdAt: agent.createdAt,
    updatedAt: agent.updatedAt,
  };
}

/** An agent with the config of its current version (as stored, or as just validated for storing). */
export function agentWithConfig(agent: AgentRecord, snapshot: { version: number; config: unknown }, readiness: AgentReadiness) {
  return { ...agentSummary(agent, readiness), version: snapshot.version, config: snapshot.config };
}

/** Another organization's agent is indistinguishable from a missing one. */
export function agentNotFound(id: string): NotFoundException {
  return new NotFoundException({ statusCode: 404, error: 'Not Found', code: 'agent_not_found', message: `No agent ${id}.` });
}
