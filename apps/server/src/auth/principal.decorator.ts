import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { ApiPrincipal, AuthenticatedRequest } from './api-key.guard';

/** The organization and key behind the request (set by ApiKeyGuard). */
export const Principal = createParamDecorator(
  (_data: unknown, context: ExecutionContext): ApiPrincipal =>
    context.switchToHttp().getRequest<AuthenticatedRequest>().principal,
);
