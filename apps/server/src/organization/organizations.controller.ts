import { Body, Controller, Get, Post, UseGuards } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { OrganizationRepository } from '@switchboard/persistence';
import { z } from 'zod';
import { generateApiKey } from '../api-keys/api-key-secret';
import { OperatorKeyGuard } from '../auth/operator-key.guard';
import { ZodValidationPipe } from '../common/zod-validation.pipe';
import { ApiErrors, ApiKeyAuthenticated, createApiDto, isoDateTime, uuid } from '../openapi/api-schemas';

/** The name of the admin key an organization is created with (revocable like any other). */
export const FIRST_ADMIN_KEY_NAME = 'first-admin';

const createOrganizationBody = z.strictObject({
  name: z.string().trim().min(1).max(200),
  /** null or absent: the deployment default (MAX_CONCURRENT_CALLS_PER_ORG). */
  maxConcurrentCalls: z.number().int().min(0).max(100_000).nullable().optional(),
});
class CreateOrganizationBodyDto extends createApiDto(createOrganizationBody) {}

const operatorOrganizationSchema = z.strictObject({
  id: uuid,
  name: z.string(),
  createdAt: isoDateTime,
  maxConcurrentCalls: z.number().int().nullable().describe("The organization's own concurrency limit; null: the deployment default."),
});
class OrganizationListDto extends createApiDto(z.strictObject({ data: z.array(operatorOrganizationSchema) })) {}
class CreatedOrganizationDto extends createApiDto(
  operatorOrganizationSchema.extend({
    adminKey: z.strictObject({
      id: uuid,
      name: z.string(),
      prefix: z.string(),
      scopes: z.array(z.string()),
      key: z.string().describe("The new organization's admin API key: shown in this response only, stored hashed."),
    }),
  }),
) {}

/**
 * Tenants, for the deployment operator (OPERATOR_API_KEY), not for organizations' own keys. Creating
 * an organization returns its first admin key once; from then on the organization manages itself
 * (its own keys, agents, numbers, webhooks) and is invisible to every other organization.
 */
@ApiTags('Organizations (operator)')
@ApiKeyAuthenticated()
@Controller('v1/organizations')
@UseGuards(OperatorKeyGuard)
export class OrganizationsController {
  constructor(private readonly organizations: OrganizationRepository) {}

  @Post()
  @ApiOperation({ summary: 'Create an organization and its first admin key (operator key only)' })
  @ApiCreatedResponse({ type: CreatedOrganizationDto })
  @ApiErrors(400, 409)
  async create(@Body(new ZodValidationPipe(createOrganizationBody)) body: CreateOrganizationBodyDto) {
    const { rawKey, prefix } = generateApiKey();
    const created = await this.organizations.createWithAdminKey({
      name: body.name,
      maxConcurrentCalls: body.maxConcurrentCalls ?? null,
      adminKey: { name: FIRST_ADMIN_KEY_NAME, rawKey, prefix },
    });
    return {
      id: created.id,
      name: created.name,
      createdAt: created.createdAt.toISOString(),
      maxConcurrentCalls: created.maxConcurrentCalls,
      adminKey: { id: created.adminKeyId, name: FIRST_ADMIN_KEY_NAME, prefix, scopes: ['admin'], key: rawKey },
    };
  }

  @Get()
  @ApiOperation({ summary: 'List every organization of the deployment (operator key only)' })
  @ApiOkResponse({ type: OrganizationListDto })
  async list() {
    const organizations = await this.organizations.list();
    return { data: organizations.map((organization) => ({ ...organization, createdAt: organization.createdAt.toISOString() })) };
  }
}
