import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../prisma.service';
import { invalidInput } from '../persistence.errors';
import { isUuid } from '../uuid';

export interface OrganizationRecord {
  id: string;
  name: string;
  createdAt: Date;
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

  async findById(id: string): Promise<OrganizationRecord | null> {
    if (!isUuid(id)) return null;
    return this.prisma.organization.findUnique({ where: { id } });
  }
}
