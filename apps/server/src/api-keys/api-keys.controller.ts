import { Body, Controller, Delete, Get, HttpCode, HttpStatus, NotFoundException, Param, Post, UseGuards } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { ApiKeyRecord } from '@switchboard/persistence';
import { ApiKeyGuard, type ApiPrincipal } from '../auth/api-key.guard';
import { Principal } from '../auth/principal.decorator';
import { RequireScope } from '../auth/require-scope.decorator';
import { ZodValidationPipe } from '../common/zod-validation.pipe';
import { ApiErrors, ApiKeyAuthenticated } from '../openapi/api-schemas';
import { ApiKeyListDto, apiKeyIdParam, CurrentApiKeyDto, createApiKeyBody, CreateApiKeyBodyDto, CreatedApiKeyDto } from './api-key-requests.schema';
import { ApiKeysService } from './api-keys.service';

/**
 * API keys of the caller's organization. The raw key is in the create response only; afterwards
 * only its display prefix is ever shown, so listing is safe for a `read` key; creating and revoking
 * keys need `admin` (a read key must not mint itself an admin key).
 */
@ApiTags('API keys')
@ApiKeyAuthenticated()
@Controller('v1/api-keys')
@UseGuards(ApiKeyGuard)
export class ApiKeysController {
  constructor(private readonly apiKeys: ApiKeysService) {}

  @Post()
  @RequireScope('admin')
  @ApiCreatedResponse({ type: CreatedApiKeyDto })
  @ApiErrors(400, 403, 409)
  async create(@Principal() principal: ApiPrincipal, @Body(new ZodValidationPipe(createApiKeyBody)) body: CreateApiKeyBodyDto) {
    const { record, rawKey } = await this.apiKeys.create(principal.organizationId, body.name, body.scopes);
    return { ...apiKeyView(record), key: rawKey };
  }

  @Get()
  @ApiOkResponse({ type: ApiKeyListDto, description: 'Every key of the organization, revoked ones included, never with the secret.' })
  async list(@Principal() principal: ApiPrincipal) {
    const keys = await this.apiKeys.list(principal.organizationId);
    return { data: keys.map(apiKeyView) };
  }

  /** The key making the request: how a client (the console) learns its organization and scopes. */
  @Get('current')
  @ApiOkResponse({ type: CurrentApiKeyDto })
  async current(@Principal() principal: ApiPrincipal) {
    const keys = await this.apiKeys.list(principal.organizationId);
    const key = keys.find((candidate) => candidate.id === principal.apiKeyId);
    if (!key) throw new NotFoundException({ statusCode: 404, error: 'Not Found', code: 'api_key_not_found', message: 'The key making this request no longer exists.' });
    return { ...apiKeyView(key), organizationId: principal.organizationId };
  }

  /** Revoking the very key making the request is allowed: it is how a leaked key retires itself. */
  @Delete(':id')
  @RequireScope('admin')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiNoContentResponse({ description: 'Revoked: the key answers 401 from now on.' })
  @ApiErrors(403, 404)
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
