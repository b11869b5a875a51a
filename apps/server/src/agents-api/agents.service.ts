import { isDeepStrictEqual } from 'node:util';
import { Injectable } from '@nestjs/common';
import type { AgentConfig } from '@switchboard/agent-config';
import {
  AgentRepository,
  type AgentConfigSnapshot,
  type AgentPage,
  type AgentRecord,
  type CreateAgentInput,
  type InputJsonValue,
  type ListAgentsInput,
} from '@switchboard/persistence';
import { AgentConfigValidator } from './agent-config-validation';

/**
 * An organization's agents. Every config change is a new, immutable version; a config is validated
 * (AgentConfigValidator answers 400) before anything is written. Null or false: no such agent in
 * the organization.
 */
@Injectable()
export class AgentsService {
  constructor(
    private readonly agents: AgentRepository,
    private readonly configs: AgentConfigValidator,
  ) {}

  async create(organizationId: string, name: string, engine: CreateAgentInput['engine'], rawConfig: unknown): Promise<{ agent: AgentRecord; config: AgentConfig }> {
    const config = await this.configs.validate(organizationId, rawConfig);
    const agent = await this.agents.create({ organizationId, name, engine, config: config as InputJsonValue });
    return { agent, config };
  }

  list(input: ListAgentsInput): Promise<AgentPage> {
    return this.agents.list(input);
  }

  /** The agent with its current config version. */
  async withCurrentConfig(organizationId: string, id: string): Promise<{ agent: AgentRecord; snapshot: AgentConfigSnapshot } | null> {
    const agent = await this.agents.findById(organizationId, id);
    if (!agent) return null;
    const snapshot = await this.agents.configVersion(id, agent.currentVersion);
    return snapshot ? { agent, snapshot } : null;
  }

  /** A past (or the current) config version; `agent` is null when the organization has no such agent. */
  async configVersion(organizationId: string, id: string, version: number): Promise<{ agent: AgentRecord | null; snapshot: AgentConfigSnapshot | null }> {
    // Ownership first: config versions are keyed by agent only.
    const agent = await this.agents.findById(organizationId, id);
    if (!agent) return { agent: null, snapshot: null };
    return { agent, snapshot: await this.agents.configVersion(id, version) };
  }

  /** Renames the agent and/or stores `rawConfig` as a new version (an unchanged config is not a new version). */
  async update(organizationId: string, id: string, changes: { name?: string | undefined; rawConfig?: unknown }): Promise<boolean> {
    // Validate before writing anything, so a bad config does not leave a half-applied rename.
    const config = changes.rawConfig === undefined ? undefined : await this.configs.validate(organizationId, changes.rawConfig);
    const agent = await this.agents.findById(organizationId, id);
    if (!agent) return false;
    if (changes.name !== undefined && changes.name !== agent.name) {
      if (!(await this.agents.rename(organizationId, id, changes.name))) return false;
    }
    if (config !== undefined) {
      const current = await this.agents.configVersion(id, agent.currentVersion);
      // Re-sending the same config (e.g. a client saving a form unchanged) is not a new version.
      if (!current || !isDeepStrictEqual(current.config, config)) {
        if (!(await this.agents.updateConfig(organizationId, id, config as InputJsonValue))) return false;
      }
    }
    return true;
  }

  /** Soft delete: past calls keep pointing at it; its numbers are unbound. */
  softDelete(organizationId: string, id: string): Promise<boolean> {
    return this.agents.softDelete(organizationId, id);
  }
}
