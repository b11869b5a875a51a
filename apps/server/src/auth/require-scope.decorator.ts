import { SetMetadata } from '@nestjs/common';
import type { ApiKeyScope } from '@switchboard/persistence';

export const REQUIRED_SCOPE_METADATA = 'switchboard:required-scope';

/**
 * The scope an API key needs for a route (checked by ApiKeyGuard after authentication). Routes
 * without it fall back to the HTTP method: reads need `read`, anything else `admin`, so a write
 * route that forgets the decorator still fails closed.
 */
export const RequireScope = (scope: ApiKeyScope) => SetMetadata(REQUIRED_SCOPE_METADATA, scope);
