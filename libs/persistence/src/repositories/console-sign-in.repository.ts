import { Injectable } from '@nestjs/common';
import { PrismaService } from '../prisma.service';
import { hashSecret } from '../secret-hash';
import { isUuid } from '../uuid';
import { ADMIN_SCOPE, apiKeyRow } from './api-key.repository';

/** The key a claimed link created: its raw value is returned this once and never stored. */
export interface ClaimedSignIn {
  organizationId: string;
  apiKeyId: string;
}

/** Why a link could not be claimed; all read the same to the client (see FirstRunSignInService). */
export type SignInClaimRefusal = 'unknown' | 'used' | 'expired';

export const FIRST_RUN_API_KEY_NAME = 'first-run-admin';

/**
 * One-time console sign-in links (first run without ADMIN_API_KEY). Only the link token's sha256
 * is stored. Claiming marks the link used and creates the organization's admin key in one
 * transaction, so a link yields exactly one key even when two claims race, and a failed key
 * insert leaves the link usable.
 */
@Injectable()
export class ConsoleSignInRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Whether the organization has an admin key that still authenticates. */
  async hasActiveAdminKey(organizationId: string): Promise<boolean> {
    if (!isUuid(organizationId)) return false;
    const count = await this.prisma.apiKey.count({ where: { organizationId, revokedAt: null, scopes: { has: ADMIN_SCOPE } } });
    return count > 0;
  }

  /** Stores a new link for the organization; links it had that were never used stop working. */
  async replaceLink(organizationId: string, rawToken: string, expiresAt: Date): Promise<void> {
    if (!isUuid(organizationId)) throw new Error(`Invalid organization id: ${organizationId}`);
    await this.prisma.$transaction([
      this.prisma.consoleSignInLink.deleteMany({ where: { organizationId, usedAt: null } }),
      this.prisma.consoleSignInLink.create({ data: { organizationId, tokenHash: hashSecret(rawToken), expiresAt } }),
    ]);
  }

  /**
   * Spends the link and creates an admin key with `rawKey` (hashed) for its organization. Returns
   * the refusal when the link is unknown, already used or expired.
   */
  async claim(rawToken: string, key: { rawKey: string; prefix: string }, now = new Date()): Promise<ClaimedSignIn | SignInClaimRefusal> {
    const tokenHash = hashSecret(rawToken);
    return this.prisma.$transaction(async (tx) => {
      const link = await tx.consoleSignInLink.findUnique({ where: { tokenHash }, select: { id: true, organizationId: true, usedAt: true, expiresAt: true } });
      if (!link) return 'unknown';
      if (link.usedAt !== null) return 'used';
      if (link.expiresAt.getTime() <= now.getTime()) return 'expired';
      // The row lock taken here makes a racing claim wait, then find used_at set and update nothing.
      const spent = await tx.consoleSignInLink.updateMany({ where: { id: link.id, usedAt: null }, data: { usedAt: now } });
      if (spent.count !== 1) return 'used';
      const created = await tx.apiKey.create({
        data: { organizationId: link.organizationId, ...apiKeyRow({ name: FIRST_RUN_API_KEY_NAME, rawKey: key.rawKey, prefix: key.prefix, scopes: [ADMIN_SCOPE] }) },
        select: { id: true },
      });
      return { organizationId: link.organizationId, apiKeyId: created.id };
    });
  }
}
