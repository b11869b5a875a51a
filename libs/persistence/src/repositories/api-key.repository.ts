import { Injectable } from '@nestjs/common';
import { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../prisma.service';
import { isUniqueViolation } from '../database-errors';
import { invalidInput, PersistenceError } from '../persistence.errors';
import { apiKeyDisplayPrefix, hashSecret } from '../secret-hash';
import { isUuid } from '../uuid';

export const BOOTSTRAP_API_KEY_NAME = 'bootstrap-admin';
export const ADMIN_SCOPE = 'admin';
export const READ_SCOPE = 'read';
/** Every scope a key can hold. `admin` includes everything `read` allows. */
export const API_KEY_SCOPES = [ADMIN_SCOPE, READ_SCOPE] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

/** lastUsedAt is advisory; writing it at most once a minute per key keeps auth read-only. */
const LAST_USED_WRITE_INTERVAL_MS = 60_000;

export interface ActiveApiKey {
  id: string;
  organizationId: string;
  scopes: string[];
}

/** What listings show of a key: never the raw key, never its hash. */
export interface ApiKeyRecord {
  id: string;
  name: string;
  prefix: string;
  scopes: string[];
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

export interface CreateApiKeyInput {
  organizationId: string;
  name: string;
  /** The freshly generated secret; only its sha256 is stored. */
  rawKey: string;
  /** Leading characters of rawKey kept for display; must be a short prefix of it. */
  prefix: string;
  scopes: ApiKeyScope[];
}

const PUBLIC_KEY_FIELDS = {
  id: true,
  name: true,
  prefix: true,
  scopes: true,
  createdAt: true,
  lastUsedAt: true,
  revokedAt: true,
} as const;

export type CreateWithinLimitResult = { created: true; record: ApiKeyRecord } | { created: false; active: number };

export interface BootstrapKeyResult {
  id: string;
  /** True when this call inserted the key (first boot, or ADMIN_API_KEY changed). */
  created: boolean;
  /** True when the key exists but was revoked: it stays revoked and will not authenticate. */
  revoked: boolean;
}

/** The stored columns of a new key (its hash, never the key), after checking what the caller gave. */
export function apiKeyRow(input: Omit<CreateApiKeyInput, 'organizationId'>): { name: string; keyHash: string; prefix: string; scopes: string[] } {
  if (input.rawKey.length === 0) throw invalidInput('An API key must not be empty');
  // Guards against a caller storing (and later listing) the whole secret as its "prefix".
  if (!input.rawKey.startsWith(input.prefix) || input.prefix.length * 2 > input.rawKey.length) {
    throw invalidInput('An API key prefix must be a short leading part of the key');
  }
  if (input.scopes.length === 0) throw invalidInput('An API key needs at least one scope');
  return { name: input.name, keyHash: hashSecret(input.rawKey), prefix: input.prefix, scopes: [...new Set(input.scopes)] };
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

  /** Stores a new key of the organization (hashed) and returns what may be shown of it. */
  async create(input: CreateApiKeyInput): Promise<ApiKeyRecord> {
    if (!isUuid(input.organizationId)) throw invalidInput(`Invalid organization id: ${input.organizationId}`);
    return this.prisma.apiKey.create({ data: { organizationId: input.organizationId, ...apiKeyRow(input) }, select: PUBLIC_KEY_FIELDS });
  }

  /**
   * Stores a new key unless the organization already holds `maxActive` active (not revoked) keys.
   * The count and the insert run under the organization's API-key advisory lock, so concurrent
   * mints from any number of processes are decided one after the other: two mints at max - 1
   * cannot both pass. (A lock of its own, not the organization row's, so minting never waits on
   * call admission or the cost ledger.)
   */
  async createWithinLimit(input: CreateApiKeyInput, maxActive: number): Promise<CreateWithinLimitResult> {
    if (!isUuid(input.organizationId)) throw invalidInput(`Invalid organization id: ${input.organizationId}`);
    if (!Number.isInteger(maxActive) || maxActive < 1) throw invalidInput('maxActive must be a positive integer');
    const row = apiKeyRow(input);
    return this.prisma.$transaction(async (tx) => {
      await tx.$executeRaw(Prisma.sql`SELECT pg_advisory_xact_lock(hashtextextended(${`switchboard:api-keys:${input.organizationId}`}, 0))`);
      const active = await tx.apiKey.count({ where: { organizationId: input.organizationId, revokedAt: null } });
      if (active >= maxActive) return { created: false, active };
      const record = await tx.apiKey.create({ data: { organizationId: input.organizationId, ...row }, select: PUBLIC_KEY_FIELDS });
      return { created: true, record };
    });
  }

  /** All keys of the organization, revoked ones included (so an operator sees what was retired), oldest first. */
  async list(organizationId: string): Promise<ApiKeyRecord[]> {
    if (!isUuid(organizationId)) return [];
    return this.prisma.apiKey.findMany({
      where: { organizationId },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      select: PUBLIC_KEY_FIELDS,
    });
  }

  /**
   * Revokes a key of the organization. False when no such key exists in that organization, so
   * another organization's key id is indistinguishable from an unknown one. Revoking an already
   * revoked key keeps its original revokedAt and still counts as found.
   */
  async revoke(organizationId: string, id: string, now = new Date()): Promise<boolean> {
    if (!isUuid(organizationId) || !isUuid(id)) return false;
    return this.prisma.$transaction(async (tx) => {
      const key = await tx.apiKey.findFirst({ where: { id, organizationId }, select: { revokedAt: true } });
      if (!key) return false;
      if (key.revokedAt === null) await tx.apiKey.update({ where: { id }, data: { revokedAt: now } });
      return true;
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
