import { Body, Controller, Delete, Get, HttpCode, HttpStatus, NotFoundException, Param, Post, UseGuards } from '@nestjs/common';
import { ApiKeyRepository, type ApiKeyRecord } from '@switchboard/persistence';
import { ApiKeyGuard, type ApiPrincipal } from '../auth/api-key.guard';
import { Principal } from '../auth/principal.decorator';
import { RequireScope } from '../auth/require-scope.decorator';
import { ZodValidationPipe } from '../common/zod-validation.pipe';
import { generateApiKey } from './api-key-secret';
import { apiKeyIdParam, createApiKeyBody, type CreateApiKeyBody } from './api-key-requests.schema';

/**
 * API keys of the caller's organization. The raw key is in the create response only; afterwards
 * only its display prefix is ever shown, so listing is safe for a `read` key; creating and revoking
 * keys need `admin` (a read key must not mint itself an admin key).
 */
@Controller('v1/api-keys')
@UseGuards(ApiKeyGuard)
export class ApiKeysController {
  constructor(private readonly apiKeys: ApiKeyRepository) {}

  @Post()
  @RequireScope('admin')
  async create(@Principal() principal: ApiPrincipal, @Body(new ZodValidationPipe(createApiKeyBody)) body: CreateApiKeyBody) {
    const { rawKey, prefix } = generateApiKey();
    const record = await this.apiKeys.create({ organizationId: principal.organizationId, name: body.name, rawKey, prefix, scopes: body.scopes });
    return { ...apiKeyView(record), key: rawKey };
  }

  @Get()
  async list(@Principal() principal: ApiPrincipal) {
    const keys = await this.apiKeys.list(principal.organizationId);
    return { data: keys.map(apiKeyView) };
  }

  /** Revoking the very key making the request is allowed: it is how a leaked key retires itself. */
  @Delete(':id')
  @RequireScope('admin')
  @HttpCode(HttpStatus.NO_CONTENT)
  async revoke(@Principal() principal: ApiPrincipal, @Param('id', new ZodValidationPipe(apiKeyIdParam)) id: string): Promise<void> {
    if (!(await this.apiKeys.revoke(principal.organizationId, id))) {
      throw new NotFoundException({ statusCode: 404, error: 'Not Found', code: 'api_key_not_found', message: `No API key ${id}.` });
    }
  }
}

function apiKeyView(key: ApiKeyRecord) {
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    scopes: key.scopes,
    createdAt: key.createdAt.toISOString(),
    lastUsedAt: key.lastUsedAt?.toISOString() ?? null,
    revokedAt: key.revokedAt?.toISOString() ?? null,
  };
}
