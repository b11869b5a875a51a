import { ForbiddenException } from '@nestjs/common';
import { ADMIN_SCOPE, READ_SCOPE, type ApiKeyScope } from '@switchboard/persistence';

const READ_ONLY_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The scope a route needs when it does not say: reads need `read`, writes `admin`. */
export function defaultScopeFor(method: string): ApiKeyScope {
  return READ_ONLY_METHODS.has(method.toUpperCase()) ? READ_SCOPE : ADMIN_SCOPE;
}

/** `admin` includes `read`: an admin key can do everything a read key can. */
export function hasScope(granted: readonly string[], required: ApiKeyScope): boolean {
  return granted.includes(ADMIN_SCOPE) || granted.includes(required);
}

/**
 * A 403, not a 404: the key is authenticated and the resource is its own organization's, it just
 * may not do this. The body names the missing scope so a client can tell which key it needs.
 */
export function insufficientScope(required: ApiKeyScope): ForbiddenException {
  return new ForbiddenException({
    statusCode: 403,
    error: 'Forbidden',
    code: 'insufficient_scope',
    message: `This API key lacks the "${required}" scope this request needs.`,
    requiredScope: required,
  });
}
