import { Body, ConflictException, Controller, Delete, Get, HttpCode, HttpStatus, NotFoundException, Param, Post, Put, UseGuards } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { ApiKeyGuard, type ApiPrincipal } from '../auth/api-key.guard';
import { Principal } from '../auth/principal.decorator';
import { RequireScope } from '../auth/require-scope.decorator';
import { ZodValidationPipe } from '../common/zod-validation.pipe';
import { ApiErrors, ApiKeyAuthenticated } from '../openapi/api-schemas';
import {
  createSecretBody,
  CreateSecretBodyDto,
  replaceSecretBody,
  ReplaceSecretBodyDto,
  SecretDto,
  SecretListDto,
  secretNameParam,
} from './secret-requests.schema';
import { SecretExistsError, SecretsService } from './secrets.service';

/**
 * The organization's secrets (engine API keys, webhook signing secrets). Values go in and never
 * come out: responses show the name, the last 4 characters and when it changed. Agent configs
 * reference a secret by name, so replacing a value needs no new config version.
 */
@ApiTags('Secrets')
@ApiKeyAuthenticated()
@Controller('v1/secrets')
@UseGuards(ApiKeyGuard)
export class SecretsController {
  constructor(private readonly secrets: SecretsService) {}

  @Post()
  @RequireScope('admin')
  @ApiCreatedResponse({ type: SecretDto })
  @ApiErrors(400, 403, 409)
  async create(@Principal() principal: ApiPrincipal, @Body(new ZodValidationPipe(createSecretBody)) body: CreateSecretBodyDto) {
    try {
      return await this.secrets.create(principal.organizationId, body.name, body.value);
    } catch (error) {
      if (error instanceof SecretExistsError) {
        throw new ConflictException({ statusCode: 409, error: 'Conflict', code: 'secret_exists', message: `A secret named "${body.name}" already exists; PUT /v1/secrets/${body.name} replaces its value.` });
      }
      throw error;
    }
  }

  @Get()
  @ApiOkResponse({ type: SecretListDto })
  async list(@Principal() principal: ApiPrincipal) {
    return { data: await this.secrets.list(principal.organizationId) };
  }

  @Put(':name')
  @RequireScope('admin')
  @ApiOkResponse({ type: SecretDto, description: 'Replaces the value; calls started from now on use it.' })
  @ApiErrors(400, 403, 404)
  async replace(
    @Principal() principal: ApiPrincipal,
    @Param('name', new ZodValidationPipe(secretNameParam)) name: string,
    @Body(new ZodValidationPipe(replaceSecretBody)) body: ReplaceSecretBodyDto,
  ) {
    const replaced = await this.secrets.replace(principal.organizationId, name, body.value);
    if (!replaced) throw secretNotFound(name);
    return replaced;
  }

  @Delete(':name')
  @RequireScope('admin')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiNoContentResponse({ description: 'The secret is deleted; configs that still reference it fail at call start until it is created again.' })
  @ApiErrors(403, 404)
  async remove(@Principal() principal: ApiPrincipal, @Param('name', new ZodValidationPipe(secretNameParam)) name: string): Promise<void> {
    if (!(await this.secrets.delete(principal.organizationId, name))) throw secretNotFound(name);
  }
}

function secretNotFound(name: string): NotFoundException {
  return new NotFoundException({ statusCode: 404, error: 'Not Found', code: 'secret_not_found', message: `No secret named "${name}".` });
}
