import { timingSafeEqual } from 'node:crypto';
import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@switchboard/config';
import { hashSecret } from '@switchboard/persistence';
import type { Request, Response } from 'express';
import { ApiKeyRateLimiter } from './api-key-rate-limiter';
import { bearerToken, unauthorized } from './bearer-token';

/**
 * Deployment-level routes (creating organizations) take the operator key from OPERATOR_API_KEY,
 * not an organization's API key: an organization's admin must not be able to mint other tenants.
 * Without OPERATOR_API_KEY the routes are closed (401 operator_api_disabled, not counted: no key is
 * checked). The comparison is of sha256 digests in constant time, so the key cannot be guessed from
 * response timing; a missing or wrong key counts against the client address's anonymous budget.
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
    const request = context.switchToHttp().getRequest<Request>();
    const response = context.switchToHttp().getResponse<Response>();
    const rawKey = bearerToken(request.headers.authorization);
    if (!rawKey) {
      await this.rateLimiter.consumeAnonymous(request.ip, response);
      throw unauthorized('missing_api_key', 'Send the operator key as "Authorization: Bearer <key>".');
    }
    if (!timingSafeEqual(Buffer.from(hashSecret(rawKey), 'hex'), this.operatorKeyHash)) {
      // Wrong keys count against the client address, so the operator key cannot be guessed at speed.
      await this.rateLimiter.consumeAnonymous(request.ip, response);
      throw unauthorized('invalid_operator_key', 'This route needs the operator key (OPERATOR_API_KEY), not an organization API key.');
    }
    await this.rateLimiter.consumeOperator(response);
    return true;
  }
}
