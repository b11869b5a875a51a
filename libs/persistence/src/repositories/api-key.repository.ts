import { Injectable } from '@nestjs/common';
import { PrismaService } from '../prisma.service';
import { isUniqueViolation } from '../database-errors';
import { invalidInput, PersistenceError } from '../persistence.errors';
import { apiKeyDisplayPrefix, hashSecret } from '../secret-hash';
import { isUuid } from '../uuid';

export const BOOTSTRAP_API_KEY_NAME = 'bootstrap-admin';
export const ADMIN_SCOPE = 'admin';

/** lastUsedAt is advisory; writing it at most once a minute per key keeps auth read-only. */
const LAST_USED_WRITE_INTERVAL_MS = 60_000;

export interface ActiveApiKey {
  id: string;
  organizationId: string;
  scopes: string[];
}

export interface BootstrapKeyResult {
  id: string;
  /** True when this call inserted the key (first boot, or ADMIN_API_KEY changed). */
  created: boolean;
  /** True when the key exists but was revoked: it stays revoked and will not authenticate. */
  revoked: boolean;
}

@Injectable()
export class ApiKeyRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Makes ADMIN_API_KEY a working admin key of `organizationId`, storing only its hash.
   * Earlier bootstrap keys of the organization are revoked, so rotating the variable and
   * restarting retires the old key. A bootstrap key revoked through the API is NOT revived
   * by a restart (result.revoked tells the caller to warn): reviving a key someone
   * deliberately revoked would be a surprise with security consequences.
   */
  async upsertBootstrapKey(organizationId: string, rawKey: string): Promise<BootstrapKeyResult> {
    if (rawKey.length === 0) throw invalidInput('The bootstrap API key must not be empty');
    if (!isUuid(organizationId)) throw invalidInput(`Invalid organization id: ${organizationId}`);
    const keyHash = hashSecret(rawKey);
    try {
      return await this.upsertBootstrapKeyOnce(organizationId, rawKey, keyHash);
    } catch (error) {
      // Two replicas booting at once both saw no key and both inserted; the loser's retry
      // now finds the winner's row.
      if (!isUniqueViolation(error)) throw error;
      return this.upsertBootstrapKeyOnce(organizationId, rawKey, keyHash);
    }
  }

  private upsertBootstrapKeyOnce(organizationId: string, rawKey: string, keyHash: string): Promise<BootstrapKeyResult> {
    return this.prisma.$transaction(async (tx) => {
      const existing = await tx.apiKey.findUnique({ where: { keyHash } });
      if (existing && existing.organizationId !== organizationId) {
        throw new PersistenceError('conflict', 'This API key is already registered to another organization');
      }
      await tx.apiKey.updateMany({
        where: { organizationId, name: BOOTSTRAP_API_KEY_NAME, revokedAt: null, keyHash: { not: keyHash } },
        data: { revokedAt: new Date() },
      });
      if (existing) return { id: existing.id, created: false, revoked: existing.revokedAt !== null };
      const created = await tx.apiKey.create({
        data: {
          organizationId,
          name: BOOTSTRAP_API_KEY_NAME,
          keyHash,
          prefix: apiKeyDisplayPrefix(rawKey),
          scopes: [ADMIN_SCOPE],
        },
      });
      return { id: created.id, created: true, revoked: false };
    });
  }

  /** The non-revoked key whose hash matches, or null. */
  async findActiveByRawKey(rawKey: string): Promise<ActiveApiKey | null> {
    if (rawKey.length === 0) return null;
    return this.prisma.apiKey.findFirst({
      where: { keyHash: hashSecret(rawKey), revokedAt: null },
      select: { id: true, organizationId: true, scopes: true },
    });
  }

  /** Records use, skipping the write when it was recorded within the last minute. */
  async touchLastUsed(id: string, now = new Date()): Promise<void> {
    if (!isUuid(id)) return;
    await this.prisma.apiKey.updateMany({
      where: {
        id,
        OR: [{ lastUsedAt: null }, { lastUsedAt: { lt: new Date(now.getTime() - LAST_USED_WRITE_INTERVAL_MS) } }],
      },
      data: { lastUsedAt: now },
    });
  }
}
