import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiKeyRepository, type ApiKeyScope } from '@switchboard/persistence';
import type { Request, Response } from 'express';
import { ApiKeyRateLimiter } from './api-key-rate-limiter';
import { bearerToken, unauthorized } from './bearer-token';
import { REQUIRED_SCOPE_METADATA } from './require-scope.decorator';
import { defaultScopeFor, hasScope, insufficientScope } from './scopes';

/** What a valid API key proves about the caller; attached to the request by ApiKeyGuard. */
export interface ApiPrincipal {
  apiKeyId: string;
  organizationId: string;
  scopes: string[];
}

export type AuthenticatedRequest = Request & { principal: ApiPrincipal };

/** How precise an API key's last-used time is kept. */
const LAST_USED_RESOLUTION_MS = 60_000;

/**
 * Every admin route needs `Authorization: Bearer <key>`. Keys are looked up by hash, so the raw key
 * is never stored or logged; a missing, unknown or revoked key is the same 401, counted against the
 * client address's anonymous budget (429 instead once over it, so nobody can hammer key lookups;
 * valid keys are never charged to it). A known key must then be within its own rate limit and its
 * organization's (429 with Retry-After) and hold the route's scope (see RequireScope), else 403 insufficient_scope.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  private readonly lastRecordedAt = new Map<string, number>();

  constructor(
    private readonly apiKeys: ApiKeyRepository,
    private readonly reflector: Reflector,
    private readonly rateLimiter: ApiKeyRateLimiter,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const response = context.switchToHttp().getResponse<Response>();
    const rawKey = bearerToken(request.headers.authorization);
    if (!rawKey) {
      await this.rateLimiter.consumeAnonymous(request.ip, response);
      throw unauthorized('missing_api_key', 'Send an API key as "Authorization: Bearer <key>".');
    }
    const key = await this.apiKeys.findActiveByRawKey(rawKey);
    if (!key) {
      await this.rateLimiter.consumeAnonymous(request.ip, response);
      throw unauthorized('invalid_api_key', 'The API key is unknown or revoked.');
    }
    request.principal = { apiKeyId: key.id, organizationId: key.organizationId, scopes: key.scopes };
    // A key that authenticated was used, even if this request then lacks the scope.
    await this.recordUse(key.id);
    await this.rateLimiter.consume(key.id, response);
    await this.rateLimiter.consumeOrganization(key.organizationId, response);
    const required = this.requiredScope(context, request.method);
    if (!hasScope(key.scopes, required)) throw insufficientScope(required);
    return true;
  }

  private requiredScope(context: ExecutionContext, method: string): ApiKeyScope {
    const declared = this.reflector.getAllAndOverride<ApiKeyScope | undefined>(REQUIRED_SCOPE_METADATA, [
      context.getHandler(),
      context.getClass(),
    ]);
    return declared ?? defaultScopeFor(method);
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
