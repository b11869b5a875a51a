import { Injectable } from '@nestjs/common';
import { PrismaService } from '../prisma.service';
import { invalidInput } from '../persistence.errors';
import { isUuid } from '../uuid';
import { decodeCallCursor, encodeCallCursor } from './call-cursor';
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

export const AGENT_LIST_MAX_LIMIT = 100;

export interface ListAgentsInput {
  organizationId: string;
  limit: number;
  /** Opaque cursor from a previous page's nextCursor. */
  cursor?: string;
}

export interface AgentPage {
  items: AgentRecord[];
  nextCursor: string | null;
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

  /**
   * The organization's live agents, newest first. Keyset pagination on (createdAt, id), the same
   * cursor shape as calls (so the same opaque encoding serves both).
   */
  async list(input: ListAgentsInput): Promise<AgentPage> {
    const { organizationId, limit } = input;
    if (!Number.isInteger(limit) || limit < 1 || limit > AGENT_LIST_MAX_LIMIT) {
      throw invalidInput(`limit must be an integer from 1 to ${AGENT_LIST_MAX_LIMIT}`);
    }
    const after = input.cursor ? decodeCallCursor(input.cursor) : null;
    if (!isUuid(organizationId)) return { items: [], nextCursor: null };
    const rows = await this.prisma.agent.findMany({
      where: {
        organizationId,
        deletedAt: null,
        ...(after && {
          OR: [{ createdAt: { lt: after.createdAt } }, { createdAt: after.createdAt, id: { lt: after.id } }],
        }),
      },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: limit + 1,
      select: AGENT_SELECT,
    });
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return { items: page.map(toAgentRecord), nextCursor: rows.length > limit && last ? encodeCallCursor(last) : null };
  }

  /** The organization's oldest live agent on `engine`, or null when it has none. */
  async findOldestByEngine(organizationId: string, engine: AgentEngine): Promise<AgentRecord | null> {
    if (!isUuid(organizationId)) return null;
    const agent = await this.prisma.agent.findFirst({
      where: { organizationId, engine, deletedAt: null },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      select: AGENT_SELECT,
    });
    return agent ? toAgentRecord(agent) : null;
  }

  /** Renames the organization's agent; null when missing, deleted or another organization's. */
  async rename(organizationId: string, id: string, name: string): Promise<AgentRecord | null> {
    if (name.trim().length === 0) throw invalidInput('Agent name must not be empty');
    if (!isUuid(id) || !isUuid(organizationId)) return null;
    const renamed = await this.prisma.agent.updateMany({ where: { id, organizationId, deletedAt: null }, data: { name: name.trim() } });
    return renamed.count === 0 ? null : this.findById(organizationId, id);
  }

  /**
   * Soft-deletes the agent (its config versions stay, so past calls remain explainable) and
   * unbinds its numbers in the same transaction, so no number is left routing to a deleted agent.
   * False when the agent is missing, already deleted or another organization's.
   */
  async softDelete(organizationId: string, id: string): Promise<boolean> {
    if (!isUuid(id) || !isUuid(organizationId)) return false;
    return this.prisma.$transaction(async (tx) => {
      const deleted = await tx.agent.updateMany({ where: { id, organizationId, deletedAt: null }, data: { deletedAt: new Date() } });
      if (deleted.count === 0) return false;
      await tx.phoneNumber.updateMany({ where: { agentId: id }, data: { agentId: null } });
      return true;
    });
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
