import { createHash, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import { CanActivate, ExecutionContext, ForbiddenException, Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@switchboard/config';
import type { Request } from 'express';
import { bearerToken, unauthorized } from '../auth/bearer-token';

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * Headers a proxy adds on the way (lower case, as Node gives them): any one of them means the request
 * did not come straight to the socket. The one list; a proxy need set only one of them.
 */
export const FORWARDING_HEADERS = ['x-forwarded-for', 'forwarded', 'x-real-ip', 'via', 'x-forwarded-host'] as const;

/**
 * `GET /metrics` is the operator's and Prometheus's: with METRICS_TOKEN set it needs that token as a
 * Bearer (compared as sha256 digests in constant time); without it only a client on this machine
 * gets an answer, and only when it came straight to the socket: a request that passed a proxy on
 * this machine (HAProxy, nginx: they add one of FORWARDING_HEADERS) is refused, since a proxy
 * makes every remote client look local. No tenant's data is in the series either way.
 */
@Injectable()
export class MetricsAccessGuard implements CanActivate {
  private readonly tokenDigest: Buffer | undefined;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.tokenDigest = config.metricsToken === undefined ? undefined : digest(config.metricsToken);
  }

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<Request>();
    if (this.tokenDigest) {
      const token = bearerToken(request.headers.authorization);
      if (token === undefined || !timingSafeEqual(digest(token), this.tokenDigest)) {
        throw unauthorized('invalid_metrics_token', 'Send METRICS_TOKEN as "Authorization: Bearer <token>".');
      }
      return true;
    }
    const proxied = FORWARDING_HEADERS.some((name) => request.headers[name] !== undefined);
    if (!proxied && isLoopback(request.socket.remoteAddress)) return true;
    throw new ForbiddenException({
      statusCode: 403,
      error: 'Forbidden',
      code: 'metrics_loopback_only',
      message: 'Without METRICS_TOKEN, /metrics answers only clients on this machine that do not come through a proxy. Set METRICS_TOKEN to scrape it from elsewhere.',
    });
  }
}

export function isLoopback(address: string | undefined): boolean {
  if (address === undefined) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address;
  if (isIP(v4) === 4) return v4.startsWith('127.');
  return address === '::1';
}
