import { Injectable } from '@nestjs/common';
import { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../prisma.service';
import { isUniqueViolation } from '../database-errors';
import { invalidInput, PersistenceError } from '../persistence.errors';
import { isUuid } from '../uuid';
import type { AgentEngine } from './agent.repository';
import { decodeCallCursor, encodeCallCursor } from './call-cursor';
import type { JsonValue } from './json';

const E164_PATTERN = /^\+[1-9]\d{1,14}$/;

export interface PhoneNumberRecord {
  id: string;
  e164: string;
  organizationId: string;
  agentId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export const PHONE_NUMBER_LIST_MAX_LIMIT = 100;

export interface ListPhoneNumbersInput {
  organizationId: string;
  limit: number;
  /** Opaque cursor from a previous page's nextCursor. */
  cursor?: string;
}

export interface PhoneNumberPage {
  items: PhoneNumberRecord[];
  nextCursor: string | null;
}

const PHONE_NUMBER_SELECT = { id: true, e164: true, organizationId: true, agentId: true, createdAt: true, updatedAt: true } as const;

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
    await this.assertAgentInOrganization(organizationId, agentId);
    const select = PHONE_NUMBER_SELECT;
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

  /** The organization's numbers, newest first (keyset pagination, same cursor shape as calls). */
  async list(input: ListPhoneNumbersInput): Promise<PhoneNumberPage> {
    const { organizationId, limit } = input;
    if (!Number.isInteger(limit) || limit < 1 || limit > PHONE_NUMBER_LIST_MAX_LIMIT) {
      throw invalidInput(`limit must be an integer from 1 to ${PHONE_NUMBER_LIST_MAX_LIMIT}`);
    }
    const after = input.cursor ? decodeCallCursor(input.cursor) : null;
    if (!isUuid(organizationId)) return { items: [], nextCursor: null };
    const rows = await this.prisma.phoneNumber.findMany({
      where: {
        organizationId,
        ...(after && {
          OR: [{ createdAt: { lt: after.createdAt } }, { createdAt: after.createdAt, id: { lt: after.id } }],
        }),
      },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: limit + 1,
      select: PHONE_NUMBER_SELECT,
    });
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return { items: page, nextCursor: rows.length > limit && last ? encodeCallCursor(last) : null };
  }

  async countForOrganization(organizationId: string): Promise<number> {
    if (!isUuid(organizationId)) return 0;
    return this.prisma.phoneNumber.count({ where: { organizationId } });
  }

  /** Whether the organization has registered this number (the only numbers it may call from). */
  async ownsNumber(organizationId: string, e164: string): Promise<boolean> {
    if (!isUuid(organizationId) || !isE164(e164)) return false;
    return (await this.prisma.phoneNumber.count({ where: { organizationId, e164 } })) === 1;
  }

  /** The organization's number, or null when missing or another organization's. */
  async findById(organizationId: string, id: string): Promise<PhoneNumberRecord | null> {
    if (!isUuid(id) || !isUuid(organizationId)) return null;
    return this.prisma.phoneNumber.findFirst({ where: { id, organizationId }, select: PHONE_NUMBER_SELECT });
  }

  /**
   * Points the organization's number at another agent (null unroutes it); null when the number is
   * missing or another organization's. An agent outside the organization is invalid input.
   */
  async setAgent(organizationId: string, id: string, agentId: string | null): Promise<PhoneNumberRecord | null> {
    if (!isUuid(id) || !isUuid(organizationId)) return null;
    await this.assertAgentInOrganization(organizationId, agentId);
    const updated = await this.prisma.phoneNumber.updateMany({ where: { id, organizationId }, data: { agentId } });
    return updated.count === 0 ? null : this.findById(organizationId, id);
  }

  /** Releases the number (another organization may then register it); false when not the organization's. */
  async delete(organizationId: string, id: string): Promise<boolean> {
    if (!isUuid(id) || !isUuid(organizationId)) return false;
    const deleted = await this.prisma.phoneNumber.deleteMany({ where: { id, organizationId } });
    return deleted.count === 1;
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

  private async assertAgentInOrganization(organizationId: string, agentId: string | null): Promise<void> {
    if (agentId === null) return;
    const agent = isUuid(agentId)
      ? await this.prisma.agent.findFirst({ where: { id: agentId, organizationId, deletedAt: null }, select: { id: true } })
      : null;
    if (!agent) throw invalidInput(`Agent ${agentId} does not exist in this organization`);
  }
}
