import { Injectable } from '@nestjs/common';
import { PrismaService } from '../prisma.service';
import { isUniqueViolation } from '../database-errors';
import { invalidInput, PersistenceError } from '../persistence.errors';
import { SECRET_NAME_PATTERN } from '@switchboard/secrets';
import { isUuid } from '../uuid';

export { SECRET_NAME_PATTERN };

/** A value as stored: sealed (AES-256-GCM) by the caller; this repository never sees plaintext. */
export interface SealedSecretColumns {
  keyId: string;
  nonce: Uint8Array;
  ciphertext: Uint8Array;
}

/** What listings show: never the value. */
export interface OrganizationSecretRecord {
  name: string;
  /** The value's last 4 characters ('' for short values). */
  hint: string;
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface StoredOrganizationSecret extends OrganizationSecretRecord, SealedSecretColumns {
  organizationId: string;
}

const PUBLIC_FIELDS = { name: true, hint: true, version: true, createdAt: true, updatedAt: true } as const;

/** An organization's sealed secrets. Names are unique per organization; another organization's read as missing. */
@Injectable()
export class OrganizationSecretRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** A taken name is a conflict. */
  async create(organizationId: string, name: string, sealed: SealedSecretColumns & { hint: string }): Promise<OrganizationSecretRecord> {
    assertName(organizationId, name);
    try {
      return await this.prisma.organizationSecret.create({
        data: { organizationId, name, keyId: sealed.keyId, nonce: Buffer.from(sealed.nonce), ciphertext: Buffer.from(sealed.ciphertext), hint: sealed.hint },
        select: PUBLIC_FIELDS,
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw new PersistenceError('conflict', `A secret named "${name}" already exists`);
      throw error;
    }
  }

  /** Replaces the value (version + 1); null when the organization has no secret of that name. */
  async replace(organizationId: string, name: string, sealed: SealedSecretColumns & { hint: string }): Promise<OrganizationSecretRecord | null> {
    if (!isUuid(organizationId) || !SECRET_NAME_PATTERN.test(name)) return null;
    const { count } = await this.prisma.organizationSecret.updateMany({
      where: { organizationId, name },
      data: { keyId: sealed.keyId, nonce: Buffer.from(sealed.nonce), ciphertext: Buffer.from(sealed.ciphertext), hint: sealed.hint, version: { increment: 1 } },
    });
    return count === 1 ? this.prisma.organizationSecret.findUnique({ where: { organizationId_name: { organizationId, name } }, select: PUBLIC_FIELDS }) : null;
  }

  async delete(organizationId: string, name: string): Promise<boolean> {
    if (!isUuid(organizationId) || !SECRET_NAME_PATTERN.test(name)) return false;
    const { count } = await this.prisma.organizationSecret.deleteMany({ where: { organizationId, name } });
    return count === 1;
  }

  /** Names, hints and times, by name (an organization has a handful). */
  async list(organizationId: string): Promise<OrganizationSecretRecord[]> {
    if (!isUuid(organizationId)) return [];
    return this.prisma.organizationSecret.findMany({ where: { organizationId }, orderBy: { name: 'asc' }, select: PUBLIC_FIELDS });
  }

  /** The sealed value, to be opened by the caller; null when missing. */
  async findSealed(organizationId: string, name: string): Promise<StoredOrganizationSecret | null> {
    if (!isUuid(organizationId) || !SECRET_NAME_PATTERN.test(name)) return null;
    return this.prisma.organizationSecret.findUnique({ where: { organizationId_name: { organizationId, name } } });
  }

  /** Which of `names` the organization has (one query for a whole agent config's references). */
  async existingNames(organizationId: string, names: readonly string[]): Promise<Set<string>> {
    const valid = names.filter((name) => SECRET_NAME_PATTERN.test(name));
    if (!isUuid(organizationId) || valid.length === 0) return new Set();
    const rows = await this.prisma.organizationSecret.findMany({ where: { organizationId, name: { in: valid } }, select: { name: true } });
    return new Set(rows.map((row) => row.name));
  }

  /** Every sealed value not under `activeKeyId` (for key rotation), a page at a time. */
  async findSealedWithOtherKey(activeKeyId: string, limit: number): Promise<StoredOrganizationSecret[]> {
    return this.prisma.organizationSecret.findMany({ where: { keyId: { not: activeKeyId } }, orderBy: { id: 'asc' }, take: limit });
  }

  /**
   * Re-seals one value under a new key, only if it still holds the sealing that was read (a
   * concurrent PUT wins, and is already sealed with the active key). Not a new version: the value
   * is the same.
   */
  async resealIfUnchanged(stored: StoredOrganizationSecret, sealed: SealedSecretColumns): Promise<boolean> {
    const { count } = await this.prisma.organizationSecret.updateMany({
      where: { organizationId: stored.organizationId, name: stored.name, keyId: stored.keyId, nonce: Buffer.from(stored.nonce) },
      data: { keyId: sealed.keyId, nonce: Buffer.from(sealed.nonce), ciphertext: Buffer.from(sealed.ciphertext) },
    });
    return count === 1;
  }

  /** How many values each key id seals (start-up check that this server has every key it needs). */
  async countByKeyId(): Promise<Map<string, number>> {
    const rows = await this.prisma.organizationSecret.groupBy({ by: ['keyId'], _count: { _all: true } });
    const twilio = await this.prisma.organizationTwilioAccount.groupBy({ by: ['keyId'], _count: { _all: true } });
    const counts = new Map<string, number>();
    for (const row of [...rows, ...twilio]) counts.set(row.keyId, (counts.get(row.keyId) ?? 0) + row._count._all);
    return counts;
  }
}

function assertName(organizationId: string, name: string): void {
  if (!isUuid(organizationId)) throw invalidInput(`Invalid organization id: ${organizationId}`);
  if (!SECRET_NAME_PATTERN.test(name)) throw invalidInput('A secret name is 1-64 letters, digits, "_", "." or "-", starting with a letter');
}
