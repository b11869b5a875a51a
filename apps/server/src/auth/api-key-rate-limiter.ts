import { HttpException, HttpStatus, Inject, Injectable } from '@nestjs/common';
import { ThrottlerStorage, ThrottlerStorageService } from '@nestjs/throttler';
import { APP_CONFIG, type AppConfig } from '@switchboard/config';
import type { Response } from 'express';

const THROTTLER_NAME = 'api-key';

/**
 * Per-API-key request budget: RATE_LIMIT_REQUESTS per RATE_LIMIT_WINDOW_MS (a sliding window of
 * hits, kept by @nestjs/throttler's storage). Keyed by the key's id, not the client address, so one
 * integration's burst cannot starve another behind the same NAT, and a leaked key is contained.
 *
 * The count lives in this process's memory: with several server replicas each enforces the limit on
 * its own share of the traffic (swap in a shared ThrottlerStorage to make it global).
 */
@Injectable()
export class ApiKeyRateLimiter {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(ThrottlerStorage) private readonly storage: ThrottlerStorageService,
  ) {}

  /** Counts the request; sets the RateLimit headers and throws 429 with Retry-After when over. */
  async consume(apiKeyId: string, response: Response): Promise<void> {
    const { requests, windowMs } = this.config.rateLimit;
    const record = await this.storage.increment(apiKeyId, windowMs, requests, windowMs, THROTTLER_NAME);
    response.setHeader('RateLimit-Limit', String(requests));
    response.setHeader('RateLimit-Remaining', String(Math.max(0, requests - record.totalHits)));
    response.setHeader('RateLimit-Reset', String(Math.max(0, record.timeToExpire)));
    if (!record.isBlocked) return;
    const retryAfterS = Math.max(1, record.timeToBlockExpire);
    response.setHeader('Retry-After', String(retryAfterS));
    throw new HttpException(
      {
        statusCode: 429,
        error: 'Too Many Requests',
        code: 'rate_limited',
        message: `This API key made more than ${requests} requests in ${windowMs / 1000} s. Retry after ${retryAfterS} s.`,
        retryAfterSeconds: retryAfterS,
      },
      HttpStatus.TOO_MANY_REQUESTS,
    );
  }
}
