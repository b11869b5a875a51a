import { Injectable } from '@nestjs/common';
import { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../prisma.service';
import { isUniqueViolation } from '../database-errors';
import { invalidInput, PersistenceError } from '../persistence.errors';
import { isUuid } from '../uuid';
import type { AgentEngine } from './agent.repository';
import type { JsonValue } from './json';

const E164_PATTERN = /^\+[1-9]\d{1,14}$/;

export interface PhoneNumberRecord {
  id: string;
  e164: string;
  organizationId: string;
  agentId: string | null;
}

export interface UpsertPhoneNumberInput {
  organizationId: string;
  e164: string;
  /** The agent answering this number; null leaves the number unrouted. */
  agentId: string | null;
}

/** Everything the incoming-call webhook needs to answer, resolved in one query. */
export interface CallRoute {
  organizationId: string;
  agentId: string;
  agentEngine: AgentEngine;
  configVersion: number;
  config: JsonValue;
}

export function isE164(value: string): boolean {
  return E164_PATTERN.test(value);
}

@Injectable()
export class PhoneNumberRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Registers a number for the organization or re-points it to another agent. A number owned
   * by a different organization is a conflict, never silently moved.
   */
  async upsert(input: UpsertPhoneNumberInput): Promise<PhoneNumberRecord> {
    const { organizationId, e164, agentId } = input;
    if (!isE164(e164)) throw invalidInput(`Phone number '${e164}' is not E.164 (e.g. +14155550100)`);
    if (!isUuid(organizationId)) throw invalidInput(`Invalid organization id: ${organizationId}`);
    if (agentId !== null) {
      const agent = isUuid(agentId)
        ? await this.prisma.agent.findFirst({ where: { id: agentId, organizationId, deletedAt: null }, select: { id: true } })
        : null;
      if (!agent) throw invalidInput(`Agent ${agentId} does not exist in this organization`);
    }
    const select = { id: true, e164: true, organizationId: true, agentId: true } as const;
    const updated = await this.prisma.phoneNumber.updateMany({ where: { e164, organizationId }, data: { agentId } });
    if (updated.count === 1) return this.prisma.phoneNumber.findUniqueOrThrow({ where: { e164 }, select });
    try {
      return await this.prisma.phoneNumber.create({ data: { e164, organizationId, agentId }, select });
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw new PersistenceError('conflict', `Phone number ${e164} belongs to another organization`);
      }
      throw error;
    }
  }

  /**
   * The organization, agent and current agent config for a dialled number; null when the
   * number is unknown, has no agent, or its agent was deleted.
   */
  async findRouteByE164(e164: string): Promise<CallRoute | null> {
    if (!isE164(e164)) return null;
    // One round trip: this runs while Twilio waits for the TwiML answer.
    const rows = await this.prisma.$queryRaw<
      Array<{ organization_id: string; agent_id: string; engine: string; version: number; config: JsonValue }>
    >(Prisma.sql`
      SELECT p.organization_id, a.id AS agent_id, a.engine, v.version, v.config
      FROM phone_numbers p
      JOIN agents a ON a.id = p.agent_id AND a.deleted_at IS NULL
      JOIN agent_config_versions v ON v.agent_id = a.id AND v.version = a.current_version
      WHERE p.e164 = ${e164}`);
    const row = rows[0];
    if (!row) return null;
    return {
      organizationId: row.organization_id,
      agentId: row.agent_id,
      agentEngine: row.engine as AgentEngine,
      configVersion: row.version,
      config: row.config,
    };
  }
}
