import { isDeepStrictEqual } from 'node:util';
import { Injectable } from '@nestjs/common';
import { type AgentConfig, AgentConfigError, parseAgentConfig } from '@switchboard/agent-config';
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
import { agentNotReady } from './agent-not-ready';
import { type AgentReadiness, AgentReadinessService } from './agent-readiness';

/** An agent whose current version has no stored config (never the case for agents made through the API). */
const NO_CONFIG: AgentReadiness = { ready: false, problems: [{ path: '', message: 'the agent has no stored config' }] };

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
    private readonly readinessChecks: AgentReadinessService,
  ) {}

  async create(organizationId: string, name: string, engine: CreateAgentInput['engine'], rawConfig: unknown): Promise<{ agent: AgentRecord; config: AgentConfig; readiness: AgentReadiness }> {
    const config = await this.configs.validate(organizationId, rawConfig);
    const agent = await this.agents.create({ organizationId, name, engine, config: config as InputJsonValue });
    return { agent, config, readiness: await this.readinessChecks.check(organizationId, engine, config) };
  }

  /** A page of agents, each with its readiness (from its current config). */
  async list(input: ListAgentsInput): Promise<AgentPage & { readiness: AgentReadiness[] }> {
    const page = await this.agents.list(input);
    const readiness = await Promise.all(
      page.items.map(async (agent) => {
        const snapshot = await this.agents.currentConfig(agent.id);
        return snapshot ? this.readiness(input.organizationId, agent, snapshot.config) : NO_CONFIG;
      }),
    );
    return { ...page, readiness };
  }

  /**
   * Whether `agent` can take a call with `storedConfig` now. Configs are stored with every default
   * filled in; one stored before a field existed gets that field's default, as a call would.
   */
  async readiness(organizationId: string, agent: Pick<AgentRecord, 'engine'>, storedConfig: unknown, options: { resolveHosts?: boolean } = {}): Promise<AgentReadiness> {
    let config: AgentConfig;
    try {
      config = parseAgentConfig(storedConfig);
    } catch (error) {
      if (!(error instanceof AgentConfigError)) throw error;
      return { ready: false, problems: error.problems };
    }
    return this.readinessChecks.check(organizationId, agent.engine, config, options);
  }

  /** Throws 409 agent_not_ready when `agent` cannot take a call now (web and outbound calls ask first). */
  async assertReady(organizationId: string, agent: Pick<AgentRecord, 'id' | 'engine' | 'currentVersion'>): Promise<void> {
    const snapshot = await this.agents.configVersion(agent.id, agent.currentVersion);
    const readiness = snapshot ? await this.readiness(organizationId, agent, snapshot.config) : NO_CONFIG;
    if (!readiness.ready) throw agentNotReady(agent.id, readiness.problems);
  }

  /** The agent with its current config version and its readiness. */
  async withCurrentConfig(organizationId: string, id: string): Promise<{ agent: AgentRecord; snapshot: AgentConfigSnapshot; readiness: AgentReadiness } | null> {
    const agent = await this.agents.findById(organizationId, id);
    if (!agent) return null;
    const snapshot = await this.agents.configVersion(id, agent.currentVersion);
    return snapshot ? { agent, snapshot, readiness: await this.readiness(organizationId, agent, snapshot.config) } : null;
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
