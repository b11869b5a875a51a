import { HttpException, HttpStatus, Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@switchboard/config';
import type { Response } from 'express';
import { PinoLogger } from 'nestjs-pino';
import { Clock } from '../common/clock';
import { anonymousBucket } from './rate-limit/client-address';
import { RATE_LIMIT_STORE, type RateLimitCounts, type RateLimitStore } from './rate-limit/rate-limit-store';
import { decide, windowStartOf } from './rate-limit/sliding-window';
import { ThrottledWarning } from './rate-limit/throttled-warning';

/** Replays are budgeted per hour. */
const REPLAY_WINDOW_MS = 60 * 60 * 1000;

interface CheckOptions {
  windowMs?: number;
  /** The 429's `code`; `rate_limited` unless given. */
  code?: string;
  /** A second budget on the same request: its headers replace the first's only when it has less left. */
  headersOnlyIfTighter?: boolean;
}

/** How long a check waits for its counter before letting the request through. */
export const RATE_LIMIT_CHECK_TIMEOUT_MS = 1_000;
const UNAVAILABLE_LOG_INTERVAL_MS = 30_000;

/**
 * The API's request budgets, counted in a store every server process shares (Postgres, or Redis
 * when REDIS_URL is set), so the limits hold across replicas; see sliding-window.ts for the math.
 * - `key:<apiKeyId>`: RATE_LIMIT_REQUESTS per RATE_LIMIT_WINDOW_MS per authenticated key. Keyed by
 *   the key, not the client address, so one integration's burst cannot starve another behind the
 *   same NAT, and a leaked key is contained.
 * - `org:<organizationId>`: RATE_LIMIT_ORGANIZATION_REQUESTS over all of an organization's keys,
 *   charged only for requests its key let through, so minting keys buys no throughput while a
 *   leaked key stuck at 429 cannot spend its organization's budget.
 * - `operator`: the same budget for the operator key.
 * - `anon:<address>`: RATE_LIMIT_ANONYMOUS_REQUESTS for requests about to be refused 401 (missing,
 *   unknown or revoked key), so nobody can hammer key lookups; valid traffic is never charged.
 *
 * When the store fails or does not answer within RATE_LIMIT_CHECK_TIMEOUT_MS the request is let
 * through (fail open) with a warning: the limit protects against abuse, while every key is still
 * authenticated, so a database or Redis hiccup must not turn into an outage of the whole API.
 */
@Injectable()
export class ApiKeyRateLimiter {
  private readonly unavailable: ThrottledWarning;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(RATE_LIMIT_STORE) private readonly store: RateLimitStore,
    private readonly logger: PinoLogger,
    private readonly clock: Clock,
  ) {
    this.logger.setContext(ApiKeyRateLimiter.name);
    this.unavailable = new ThrottledWarning(logger, UNAVAILABLE_LOG_INTERVAL_MS);
  }

  /** Counts an authenticated key's request; sets the RateLimit headers and throws 429 with Retry-After when over. */
  consume(apiKeyId: string, response: Response): Promise<void> {
    const { requests, windowMs } = this.config.rateLimit;
    return this.check(`key:${apiKeyId}`, requests, response, `This API key made more than ${requests} requests in ${windowMs / 1000} s.`);
  }

  /**
   * Counts a request of the organization (after its key's own budget let it through). The
   * RateLimit headers show whichever of the two budgets has less left.
   */
  consumeOrganization(organizationId: string, response: Response): Promise<void> {
    const { organizationRequests, windowMs } = this.config.rateLimit;
    return this.check(`org:${organizationId}`, organizationRequests, response, `This organization's keys made more than ${organizationRequests} requests in ${windowMs / 1000} s.`, {
      code: 'organization_rate_limited',
      headersOnlyIfTighter: true,
    });
  }

  /** Counts a request authenticated with the operator key (one bucket: there is one operator key). */
  consumeOperator(response: Response): Promise<void> {
    const { requests, windowMs } = this.config.rateLimit;
    return this.check('operator', requests, response, `The operator key made more than ${requests} requests in ${windowMs / 1000} s.`);
  }

  /** Counts a request about to be refused 401 against its client address; throws 429 instead when over. */
  consumeAnonymous(clientIp: string | undefined, response: Response): Promise<void> {
    const { anonymousRequests, windowMs } = this.config.rateLimit;
    return this.check(
      anonymousBucket(clientIp),
      anonymousRequests,
      response,
      `This address made more than ${anonymousRequests} requests without a valid API key in ${windowMs / 1000} s.`,
    );
  }

  /**
   * Counts a webhook replay of the organization: WEBHOOK_REPLAYS_PER_HOUR. A replay re-sends an event
   * to the tenant's receiver at once, so unlimited replays would turn this server into a traffic
   * generator pointed wherever the tenant likes.
   */
  consumeReplay(organizationId: string, response: Response): Promise<void> {
    const limit = this.config.webhooks.replaysPerHour;
    return this.check(`replay:${organizationId}`, limit, response, `This organization asked for more than ${limit} webhook replays in an hour.`, { windowMs: REPLAY_WINDOW_MS });
  }

  private async check(key: string, limit: number, response: Response, overMessage: string, options: CheckOptions = {}): Promise<void> {
    const windowMs = options.windowMs ?? this.config.rateLimit.windowMs;
    const nowMs = this.clock.now().getTime();
    const counts = await this.count(key, windowStartOf(nowMs, windowMs), windowMs);
    if (!counts) return;
    const decision = decide({ limit, windowMs, nowMs, ...counts });
    const tighter =
      !options.headersOnlyIfTighter || decision.retryAfterSeconds !== undefined || !(Number(response.getHeader('RateLimit-Remaining')) <= decision.remaining);
    if (tighter) {
      response.setHeader('RateLimit-Limit', String(limit));
      response.setHeader('RateLimit-Remaining', String(decision.remaining));
      response.setHeader('RateLimit-Reset', String(decision.resetSeconds));
    }
    if (decision.retryAfterSeconds === undefined) return;
    const retryAfterS = decision.retryAfterSeconds;
    response.setHeader('Retry-After', String(retryAfterS));
    throw new HttpException(
      {
        statusCode: 429,
        error: 'Too Many Requests',
        code: options.code ?? 'rate_limited',
        message: `${overMessage} Retry after ${retryAfterS} s.`,
        retryAfterSeconds: retryAfterS,
      },
      HttpStatus.TOO_MANY_REQUESTS,
    );
  }

  /**
   * The counts, or undefined (fail open) when the store failed or missed the deadline. The deadline
   * is kept here, for both stores: a statement outside a transaction cannot carry its own
   * statement_timeout without changing the pooled session. A late answer is only ignored; the hit
   * it counted still counts.
   */
  private async count(key: string, windowStartMs: number, windowMs: number): Promise<RateLimitCounts | undefined> {
    const counted = this.store.hit(key, windowStartMs, windowMs).catch((error: unknown) => {
      this.unavailable.warn(error, `Rate limit counter (${this.store.backend}) failed; request let through`);
      return undefined;
    });
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => {
        this.unavailable.warn(undefined, `Rate limit counter (${this.store.backend}) did not answer within ${RATE_LIMIT_CHECK_TIMEOUT_MS} ms; request let through`);
        resolve(undefined);
      }, RATE_LIMIT_CHECK_TIMEOUT_MS);
    });
    try {
      return await Promise.race([counted, deadline]);
    } finally {
      clearTimeout(timer);
    }
  }
}
