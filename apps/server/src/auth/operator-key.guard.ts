import { timingSafeEqual } from 'node:crypto';
import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@switchboard/config';
import { hashSecret } from '@switchboard/persistence';
import type { Request, Response } from 'express';
import { ApiKeyRateLimiter } from './api-key-rate-limiter';
import { bearerToken, unauthorized } from './bearer-token';

/** The rate limiter's bucket for the (single) operator key. */
const OPERATOR_RATE_LIMIT_KEY = 'operator';

/**
 * Deployment-level routes (creating organizations) take the operator key from OPERATOR_API_KEY,
 * not an organization's API key: an organization's admin must not be able to mint other tenants.
 * Without OPERATOR_API_KEY the routes are closed (401 operator_api_disabled). The comparison is
 * of sha256 digests in constant time, so the key cannot be guessed from response timing.
 */
@Injectable()
export class OperatorKeyGuard implements CanActivate {
  private readonly operatorKeyHash: Buffer | undefined;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly rateLimiter: ApiKeyRateLimiter,
  ) {
    this.operatorKeyHash = config.operatorApiKey === undefined ? undefined : Buffer.from(hashSecret(config.operatorApiKey), 'hex');
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (!this.operatorKeyHash) {
      throw unauthorized('operator_api_disabled', 'Organization management is disabled: set OPERATOR_API_KEY on the server to enable it.');
    }
    const rawKey = bearerToken(context.switchToHttp().getRequest<Request>().headers.authorization);
    if (!rawKey) throw unauthorized('missing_api_key', 'Send the operator key as "Authorization: Bearer <key>".');
    if (!timingSafeEqual(Buffer.from(hashSecret(rawKey), 'hex'), this.operatorKeyHash)) {
      throw unauthorized('invalid_operator_key', 'This route needs the operator key (OPERATOR_API_KEY), not an organization API key.');
    }
    await this.rateLimiter.consume(OPERATOR_RATE_LIMIT_KEY, context.switchToHttp().getResponse<Response>());
    return true;
  }
}
