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
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(private readonly apiKeys: ApiKeyRepository) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const rawKey = bearerToken(request.headers.authorization);
    if (!rawKey) throw unauthorized('missing_api_key', 'Send an API key as "Authorization: Bearer <key>".');
    const key = await this.apiKeys.findActiveByRawKey(rawKey);
    if (!key) throw unauthorized('invalid_api_key', 'The API key is unknown or revoked.');
    request.principal = { apiKeyId: key.id, organizationId: key.organizationId, scopes: key.scopes };
    // Last-used time is bookkeeping: never make the request wait on it or fail because of it.
    void this.apiKeys.touchLastUsed(key.id).catch(() => undefined);
    return true;
  }
}

function bearerToken(header: string | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return match?.[1];
}

function unauthorized(code: string, message: string): UnauthorizedException {
  return new UnauthorizedException({ statusCode: 401, error: 'Unauthorized', code, message });
}
