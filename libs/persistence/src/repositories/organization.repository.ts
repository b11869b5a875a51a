import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../prisma.service';
import { isUniqueViolation } from '../database-errors';
import { invalidInput, PersistenceError } from '../persistence.errors';
import { isUuid } from '../uuid';
import { ADMIN_SCOPE, apiKeyRow } from './api-key.repository';
import { readConcurrency, type ConcurrencyPolicy } from './call-admission';

export interface OrganizationRecord {
  id: string;
  name: string;
  createdAt: Date;
}

/** The organization's concurrency limit and how it is being used (GET /v1/organization). */
export interface OrganizationCallUsage {
  id: string;
  name: string;
  createdAt: Date;
  /** The organization's own limit; null = the deployment default applies. */
  maxConcurrentCalls: number | null;
  /** The operator's ceiling for this organization's limit. */
  maxConcurrentCallsCap: number;
  /** The limit enforced now (maxConcurrentCalls, else the default; never above the cap). */
  effectiveMaxConcurrentCalls: number;
  activeCalls: number;
  /** Calls refused over the limit in the 24 hours before `at`. */
  refusedCallsLast24h: number;
  refusedCallsTotal: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** A new organization and the admin key that lets its owner in (POST /v1/organizations). */
export interface NewOrganizationInput {
  name: string;
  maxConcurrentCalls: number | null;
  /** The operator's cap for it; null: MAX_CONCURRENT_CALLS_CAP. */
  maxConcurrentCallsCap: number | null;
  adminKey: { name: string; rawKey: string; prefix: string };
}

@Injectable()
export class OrganizationRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Returns the organization with this name, creating it if needed (idempotent, race-safe). */
  async ensure(name: string): Promise<OrganizationRecord> {
    const trimmed = name.trim();
    if (trimmed.length === 0) throw invalidInput('Organization name must not be empty');
    // INSERT ... ON CONFLICT rather than Prisma's upsert, which reads then inserts and so
    // fails when two processes bootstrap the same organization at once.
    const rows = await this.prisma.$queryRaw<Array<{ id: string; name: string; created_at: Date }>>(Prisma.sql`
      INSERT INTO organizations (id, name) VALUES (${randomUUID()}::uuid, ${trimmed})
      ON CONFLICT (name) DO UPDATE SET name = EXCLUDED.name
      RETURNING id, name, created_at`);
    const row = rows[0];
    if (!row) throw new Error('INSERT ... RETURNING returned no row');
    return { id: row.id, name: row.name, createdAt: row.created_at };
  }

  /**
   * Creates an organization together with its first admin key (stored hashed), in one transaction:
   * an organization nobody can log into is never left behind. A taken name is a conflict.
   */
  async createWithAdminKey(
    input: NewOrganizationInput,
  ): Promise<OrganizationRecord & { maxConcurrentCalls: number | null; maxConcurrentCallsCap: number | null; adminKeyId: string }> {
    const name = input.name.trim();
    if (name.length === 0) throw invalidInput('Organization name must not be empty');
    try {
      const created = await this.prisma.organization.create({
        data: {
          name,
          maxConcurrentCalls: input.maxConcurrentCalls,
          maxConcurrentCallsCap: input.maxConcurrentCallsCap,
          apiKeys: { create: apiKeyRow({ ...input.adminKey, scopes: [ADMIN_SCOPE] }) },
        },
        select: { id: true, name: true, createdAt: true, maxConcurrentCalls: true, maxConcurrentCallsCap: true, apiKeys: { select: { id: true } } },
      });
      const { apiKeys, ...organization } = created;
      return { ...organization, adminKeyId: apiKeys[0]!.id };
    } catch (error) {
      if (isUniqueViolation(error)) throw new PersistenceError('conflict', `An organization named "${name}" already exists`);
      throw error;
    }
  }

  /** Every organization of the deployment, oldest first (the operator's view). */
  async list(): Promise<Array<OrganizationRecord & { maxConcurrentCalls: number | null; maxConcurrentCallsCap: number | null }>> {
    return this.prisma.organization.findMany({
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      select: { id: true, name: true, createdAt: true, maxConcurrentCalls: true, maxConcurrentCallsCap: true },
    });
  }

  async findById(id: string): Promise<OrganizationRecord | null> {
    if (!isUuid(id)) return null;
    return this.prisma.organization.findUnique({ where: { id }, select: { id: true, name: true, createdAt: true } });
  }

  /** Null when the organization does not exist. */
  async callUsage(id: string, policy: ConcurrencyPolicy, at = new Date()): Promise<OrganizationCallUsage | null> {
    const organization = await this.findById(id);
    if (!organization) return null;
    const [concurrency, refusedCallsLast24h, refusedCallsTotal] = await Promise.all([
      readConcurrency(this.prisma, id, policy),
      this.prisma.callRefusal.count({ where: { organizationId: id, at: { gt: new Date(at.getTime() - DAY_MS) } } }),
      this.prisma.callRefusal.count({ where: { organizationId: id } }),
    ]);
    return {
      ...organization,
      maxConcurrentCalls: concurrency.ownLimit,
      maxConcurrentCallsCap: concurrency.cap,
      effectiveMaxConcurrentCalls: concurrency.limit,
      activeCalls: concurrency.activeCalls,
      refusedCallsLast24h,
      refusedCallsTotal,
    };
  }

  /**
   * Sets the organization's own limit (null = back to the default), but never above the operator's
   * cap for it (checked in the same statement, so a concurrent cap change cannot slip past).
   * Returns 'not_found' when the organization does not exist, or the cap that refused the value.
   */
  async setMaxConcurrentCalls(id: string, maxConcurrentCalls: number | null, policy: ConcurrencyPolicy): Promise<'updated' | 'not_found' | { overCap: number }> {
    if (maxConcurrentCalls !== null && (!Number.isInteger(maxConcurrentCalls) || maxConcurrentCalls < 0)) {
      throw invalidInput('maxConcurrentCalls must be a non-negative integer or null');
    }
    if (!isUuid(id)) return 'not_found';
    const rows = await this.prisma.$queryRaw<Array<{ applied: boolean; cap: number }>>(Prisma.sql`
      WITH target AS (SELECT id, COALESCE(max_concurrent_calls_cap, ${policy.cap}::int) AS cap FROM organizations WHERE id = ${id}::uuid),
      updated AS (
        UPDATE organizations o SET max_concurrent_calls = ${maxConcurrentCalls}::int
        FROM target t WHERE o.id = t.id AND (${maxConcurrentCalls}::int IS NULL OR ${maxConcurrentCalls}::int <= t.cap)
        RETURNING o.id
      )
      SELECT EXISTS (SELECT 1 FROM updated) AS applied, t.cap FROM target t`);
    const row = rows[0];
    if (!row) return 'not_found';
    return row.applied ? 'updated' : { overCap: row.cap };
  }

  /** The operator sets (or with null, clears) the organization's cap; false when it does not exist. */
  async setConcurrencyCap(id: string, cap: number | null): Promise<boolean> {
    if (cap !== null && (!Number.isInteger(cap) || cap < 0)) throw invalidInput('maxConcurrentCallsCap must be a non-negative integer or null');
    if (!isUuid(id)) return false;
    const { count } = await this.prisma.organization.updateMany({ where: { id }, data: { maxConcurrentCallsCap: cap } });
    return count === 1;
  }

}
