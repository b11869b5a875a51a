import { CanActivate, ExecutionContext, Injectable, UnauthorizedException } from '@nestjs/common';
import { ApiKeyRepository } from '@switchboard/persistence';
import type { Request } from 'express';

/** What a valid API key proves about the caller; attached to the request by ApiKeyGuard. */
export interface ApiPrincipal {
  apiKeyId: string;
  organizationId: string;
  scopes: string[];
}

export type AuthenticatedRequest = Request & { principal: ApiPrincipal };

/**
 * Every admin route needs `Authorization: Bearer <key>`. Keys are looked up by hash, so the raw key
 * is never stored or logged; a missing, unknown or revoked key is the same 401.
 */
/** How precise an API key's last-used time is kept. */
const LAST_USED_RESOLUTION_MS = 60_000;

@Injectable()
export class ApiKeyGuard implements CanActivate {
  private readonly lastRecordedAt = new Map<string, number>();

  constructor(private readonly apiKeys: ApiKeyRepository) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const rawKey = bearerToken(request.headers.authorization);
    if (!rawKey) throw unauthorized('missing_api_key', 'Send an API key as "Authorization: Bearer <key>".');
    const key = await this.apiKeys.findActiveByRawKey(rawKey);
    if (!key) throw unauthorized('invalid_api_key', 'The API key is unknown or revoked.');
    request.principal = { apiKeyId: key.id, organizationId: key.organizationId, scopes: key.scopes };
    await this.recordUse(key.id);
    return true;
  }

  /**
   * Last-used time is bookkeeping: written at most once a minute per key (so almost no request
   * pays for it), never failing the request. It is awaited rather than left running in the
   * background, where it raced the database pool's shutdown and could keep the pool from closing.
   */
  private async recordUse(apiKeyId: string): Promise<void> {
    const now = Date.now();
    if (now - (this.lastRecordedAt.get(apiKeyId) ?? 0) < LAST_USED_RESOLUTION_MS) return;
    this.lastRecordedAt.set(apiKeyId, now);
    await this.apiKeys.touchLastUsed(apiKeyId).catch(() => undefined);
  }
}

function bearerToken(header: string | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return match?.[1];
}

function unauthorized(code: string, message: string): UnauthorizedException {
  return new UnauthorizedException({ statusCode: 401, error: 'Unauthorized', code, message });
}
