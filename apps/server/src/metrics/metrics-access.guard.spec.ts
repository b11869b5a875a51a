import { ForbiddenException, UnauthorizedException, type ExecutionContext } from '@nestjs/common';
import type { AppConfig } from '@switchboard/config';
import { FORWARDING_HEADERS, isLoopback, MetricsAccessGuard } from './metrics-access.guard';

describe('isLoopback', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.8.9.10', true],
    ['::1', true],
    ['::ffff:127.0.0.1', true],
    ['10.0.0.5', false],
    ['::ffff:10.0.0.5', false],
    ['fe80::1', false],
    ['128.0.0.1', false],
    [undefined, false],
  ])('%s -> %s', (address, expected) => {
    expect(isLoopback(address)).toBe(expected);
  });
});

describe('MetricsAccessGuard', () => {
  const contextOf = (remoteAddress: string, headers: Record<string, string> = {}) =>
    ({ switchToHttp: () => ({ getRequest: () => ({ socket: { remoteAddress }, headers }) }) }) as unknown as ExecutionContext;
  const withoutToken = new MetricsAccessGuard({ metricsToken: undefined } as AppConfig);
  const withToken = new MetricsAccessGuard({ metricsToken: 'a-metrics-token-of-24-chars' } as AppConfig);

  it('without METRICS_TOKEN: a loopback client straight to the socket, nobody else', () => {
    expect(withoutToken.canActivate(contextOf('127.0.0.1'))).toBe(true);
    expect(() => withoutToken.canActivate(contextOf('10.0.0.5'))).toThrow(ForbiddenException);
    for (const header of FORWARDING_HEADERS) expect(() => withoutToken.canActivate(contextOf('127.0.0.1', { [header]: '203.0.113.7' }))).toThrow(ForbiddenException);
  });

  it('with METRICS_TOKEN: that Bearer token from anywhere, nothing else', () => {
    expect(withToken.canActivate(contextOf('10.0.0.5', { authorization: 'Bearer a-metrics-token-of-24-chars' }))).toBe(true);
    expect(() => withToken.canActivate(contextOf('127.0.0.1'))).toThrow(UnauthorizedException);
    expect(() => withToken.canActivate(contextOf('127.0.0.1', { authorization: 'Bearer a-metrics-token-of-24-charX' }))).toThrow(UnauthorizedException);
  });
});
