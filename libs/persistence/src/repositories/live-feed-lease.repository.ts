import { Injectable } from '@nestjs/common';
import { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../prisma.service';
import { invalidInput } from '../persistence.errors';
import { isUuid } from '../uuid';

/**
 * Leases on open live call feeds, one row per feed, shared by every server process so the cap on
 * an organization's feeds holds whichever process or instance serves them. Expiry is judged by
 * the database's clock (`now()`), never a process's, so instances with drifting clocks agree.
 * Raw SQL: the table is new to the generated client's callers, and each statement is one round
 * trip anyway.
 */
@Injectable()
export class LiveFeedLeaseRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Takes lease `id` for `ttlMs` unless the organization already holds `limit` unexpired leases;
   * true when taken. Under the organization's live-feed advisory lock, so concurrent openings in
   * any number of processes are decided one at a time; the organization's expired leases (a
   * process that died) are deleted on the way.
   */
  async acquire(organizationId: string, id: string, limit: number, ttlMs: number): Promise<boolean> {
    check(organizationId, id, ttlMs);
    if (!Number.isInteger(limit) || limit < 1) throw invalidInput('limit must be a positive integer');
    return this.prisma.$transaction(async (tx) => {
      await tx.$executeRaw(Prisma.sql`SELECT pg_advisory_xact_lock(hashtextextended(${`switchboard:live-feeds:${organizationId}`}, 0))`);
      await tx.$executeRaw(Prisma.sql`DELETE FROM live_feed_leases WHERE organization_id = ${organizationId}::uuid AND expires_at <= now()`);
      const inserted = await tx.$executeRaw(Prisma.sql`
        INSERT INTO live_feed_leases (id, organization_id, expires_at)
        SELECT ${id}::uuid, ${organizationId}::uuid, now() + ${ttlMs}::int * interval '1 millisecond'
        WHERE (SELECT count(*) FROM live_feed_leases WHERE organization_id = ${organizationId}::uuid) < ${limit}::int`);
      return inserted === 1;
    });
  }

  /** Extends an unexpired lease by `ttlMs` from now; false when it expired or is gone (the feed must end). */
  async renew(organizationId: string, id: string, ttlMs: number): Promise<boolean> {
    check(organizationId, id, ttlMs);
    const updated = await this.prisma.$executeRaw(Prisma.sql`
      UPDATE live_feed_leases SET expires_at = now() + ${ttlMs}::int * interval '1 millisecond'
      WHERE id = ${id}::uuid AND organization_id = ${organizationId}::uuid AND expires_at > now()`);
    return updated === 1;
  }

  async release(organizationId: string, id: string): Promise<void> {
    if (!isUuid(organizationId) || !isUuid(id)) return;
    await this.prisma.$executeRaw(Prisma.sql`DELETE FROM live_feed_leases WHERE id = ${id}::uuid AND organization_id = ${organizationId}::uuid`);
  }

  /** Unexpired leases of the organization. */
  async countActive(organizationId: string): Promise<number> {
    if (!isUuid(organizationId)) return 0;
    const rows = await this.prisma.$queryRaw<Array<{ n: number }>>(Prisma.sql`
      SELECT count(*)::int AS n FROM live_feed_leases WHERE organization_id = ${organizationId}::uuid AND expires_at > now()`);
    return Number(rows[0]?.n ?? 0);
  }
}

function check(organizationId: string, id: string, ttlMs: number): void {
  if (!isUuid(organizationId)) throw invalidInput(`Invalid organization id: ${organizationId}`);
  if (!isUuid(id)) throw invalidInput(`Invalid lease id: ${id}`);
  if (!Number.isInteger(ttlMs) || ttlMs < 1) throw invalidInput('ttlMs must be a positive integer');
}
