import { Injectable } from '@nestjs/common';
import { PrismaService } from '../prisma.service';
import { invalidInput } from '../persistence.errors';
import { isUuid } from '../uuid';
import type { InputJsonValue, JsonValue } from './json';

export const AGENT_ENGINES = ['echo', 'pipeline', 'realtime'] as const;
export type AgentEngine = (typeof AGENT_ENGINES)[number];

export interface AgentRecord {
  id: string;
  organizationId: string;
  name: string;
  engine: AgentEngine;
  currentVersion: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface AgentConfigSnapshot {
  version: number;
  config: JsonValue;
}

export interface CreateAgentInput {
  organizationId: string;
  name: string;
  engine: AgentEngine;
  /** Already validated by the caller (the config lib owns the agent config schema). */
  config: InputJsonValue;
}

const AGENT_SELECT = {
  id: true,
  organizationId: true,
  name: true,
  engine: true,
  currentVersion: true,
  createdAt: true,
  updatedAt: true,
} as const;

export function isAgentEngine(value: string): value is AgentEngine {
  return (AGENT_ENGINES as readonly string[]).includes(value);
}

/**
 * Agents keep every config they ever had (agent_config_versions); calls record the version
 * they ran with, so a transcript can always be explained by the exact prompt/voice/model used.
 */
@Injectable()
export class AgentRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Creates the agent with its config as version 1 (one transaction). */
  async create(input: CreateAgentInput): Promise<AgentRecord> {
    if (!isAgentEngine(input.engine)) {
      throw invalidInput(`Unknown agent engine '${String(input.engine)}'; expected one of ${AGENT_ENGINES.join(', ')}`);
    }
    if (input.name.trim().length === 0) throw invalidInput('Agent name must not be empty');
    if (!isUuid(input.organizationId)) throw invalidInput(`Invalid organization id: ${input.organizationId}`);
    const agent = await this.prisma.agent.create({
      data: {
        organizationId: input.organizationId,
        name: input.name.trim(),
        engine: input.engine,
        currentVersion: 1,
        configVersions: { create: { version: 1, config: input.config } },
      },
      select: AGENT_SELECT,
    });
    return toAgentRecord(agent);
  }

  /** The organization's agent, or null when missing, deleted or owned by another organization. */
  async findById(organizationId: string, id: string): Promise<AgentRecord | null> {
    if (!isUuid(id) || !isUuid(organizationId)) return null;
    const agent = await this.prisma.agent.findFirst({
      where: { id, organizationId, deletedAt: null },
      select: AGENT_SELECT,
    });
    return agent ? toAgentRecord(agent) : null;
  }

  /** The config new calls use, or null when the agent does not exist. */
  async currentConfig(agentId: string): Promise<AgentConfigSnapshot | null> {
    if (!isUuid(agentId)) return null;
    const agent = await this.prisma.agent.findUnique({ where: { id: agentId }, select: { currentVersion: true } });
    if (!agent) return null;
    return this.configVersion(agentId, agent.currentVersion);
  }

  /** A specific past config, e.g. the one a recorded call ran with. */
  async configVersion(agentId: string, version: number): Promise<AgentConfigSnapshot | null> {
    if (!isUuid(agentId) || !Number.isInteger(version)) return null;
    return this.prisma.agentConfigVersion.findUnique({
      where: { agentId_version: { agentId, version } },
      select: { version: true, config: true },
    });
  }

  /**
   * Stores a new config version and makes it current. The version number comes from an
   * atomic increment, so concurrent updates get distinct versions instead of colliding.
   */
  async updateConfig(organizationId: string, agentId: string, config: InputJsonValue): Promise<AgentConfigSnapshot | null> {
    if (!isUuid(agentId) || !isUuid(organizationId)) return null;
    return this.prisma.$transaction(async (tx) => {
      const bumped = await tx.agent.updateMany({
        where: { id: agentId, organizationId, deletedAt: null },
        data: { currentVersion: { increment: 1 } },
      });
      if (bumped.count === 0) return null;
      const { currentVersion } = await tx.agent.findUniqueOrThrow({ where: { id: agentId }, select: { currentVersion: true } });
      return tx.agentConfigVersion.create({
        data: { agentId, version: currentVersion, config },
        select: { version: true, config: true },
      });
    });
  }
}

function toAgentRecord(row: Omit<AgentRecord, 'engine'> & { engine: string }): AgentRecord {
  // The CHECK constraint guarantees the value; the narrowing only restores the type.
  return { ...row, engine: row.engine as AgentEngine };
}
