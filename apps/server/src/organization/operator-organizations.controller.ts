import { BadRequestException, Body, Controller, Get, HttpCode, HttpStatus, Inject, NotFoundException, Param, Patch, Post, UseGuards } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { APP_CONFIG, type AppConfig } from '@switchboard/config';
import { z } from 'zod';
import { OperatorKeyGuard } from '../auth/operator-key.guard';
import { ZodValidationPipe } from '../common/zod-validation.pipe';
import { catalogView, PriceCatalogDto } from '../billing/costs-api/cost-responses.schema';
import { newCatalogVersionBody, NewCatalogVersionBodyDto } from '../billing/costs-api/price-catalog-requests.schema';
import { ApiErrors, ApiKeyAuthenticated, createApiDto, isoDateTime, uuid } from '../openapi/api-schemas';
import { OperatorOrganizationsService } from './operator-organizations.service';

/** The name of the admin key an organization is created with (revocable like any other). */
export const FIRST_ADMIN_KEY_NAME = 'first-admin';

const concurrency = z.number().int().min(0).max(100_000);

const createOrganizationBody = z.strictObject({
  name: z.string().trim().min(1).max(200),
  /** null or absent: the deployment default (MAX_CONCURRENT_CALLS_PER_ORG). */
  maxConcurrentCalls: concurrency.nullable().optional(),
  /** null or absent: MAX_CONCURRENT_CALLS_CAP. */
  maxConcurrentCallsCap: concurrency.nullable().optional(),
});
class CreateOrganizationBodyDto extends createApiDto(createOrganizationBody) {}

const updateOrganizationBody = z.strictObject({
  maxConcurrentCallsCap: concurrency.nullable().describe('The most live calls the organization may choose for itself; null: MAX_CONCURRENT_CALLS_CAP.'),
});
class UpdateOrganizationBodyDto extends createApiDto(updateOrganizationBody) {}

const organizationIdParam = z.guid({ error: 'must be an organization id (a UUID)' });

const operatorOrganizationSchema = z.strictObject({
  id: uuid,
  name: z.string(),
  createdAt: isoDateTime,
  maxConcurrentCalls: z.number().int().nullable().describe("The organization's own concurrency limit; null: the deployment default."),
  maxConcurrentCallsCap: z.number().int().nullable().describe("The operator's cap on that limit; null: MAX_CONCURRENT_CALLS_CAP."),
});
class OperatorOrganizationDto extends createApiDto(operatorOrganizationSchema) {}
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
 * (its own keys, agents, numbers, webhooks) and is invisible to every other organization. What the
 * operator decides stays the operator's: the cap on an organization's concurrency and the prices its
 * calls are billed with.
 */
@ApiTags('Organizations (operator)')
@ApiKeyAuthenticated()
@Controller('v1/organizations')
@UseGuards(OperatorKeyGuard)
export class OrganizationsController {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly organizations: OperatorOrganizationsService,
  ) {}

  @Post()
  @ApiOperation({ summary: 'Create an organization and its first admin key (operator key only)' })
  @ApiCreatedResponse({ type: CreatedOrganizationDto })
  @ApiErrors(400, 409)
  async create(@Body(new ZodValidationPipe(createOrganizationBody)) body: CreateOrganizationBodyDto) {
    const cap = body.maxConcurrentCallsCap ?? this.config.calls.maxConcurrentCap;
    if (body.maxConcurrentCalls != null && body.maxConcurrentCalls > cap) throw overCap(cap);
    const { created, rawKey, prefix } = await this.organizations.createWithAdminKey({
      name: body.name,
      maxConcurrentCalls: body.maxConcurrentCalls ?? null,
      maxConcurrentCallsCap: body.maxConcurrentCallsCap ?? null,
      adminKeyName: FIRST_ADMIN_KEY_NAME,
    });
    return {
      id: created.id,
      name: created.name,
      createdAt: created.createdAt.toISOString(),
      maxConcurrentCalls: created.maxConcurrentCalls,
      maxConcurrentCallsCap: created.maxConcurrentCallsCap,
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

  @Patch(':id')
  @ApiOperation({ summary: "Set an organization's concurrency cap (operator key only)" })
  @ApiOkResponse({ type: OperatorOrganizationDto, description: "A limit the organization set above the new cap is enforced at the cap." })
  @ApiErrors(400, 404)
  async update(@Param('id', new ZodValidationPipe(organizationIdParam)) id: string, @Body(new ZodValidationPipe(updateOrganizationBody)) body: UpdateOrganizationBodyDto) {
    const organization = await this.organizations.setConcurrencyCap(id, body.maxConcurrentCallsCap);
    if (!organization) throw organizationNotFound(id);
    return { ...organization, createdAt: organization.createdAt.toISOString() };
  }

  @Post(':id/price-catalog')
  @HttpCode(HttpStatus.CREATED)
  @ApiOperation({ summary: "Set the prices an organization's calls are billed with (operator key only)" })
  @ApiCreatedResponse({ type: PriceCatalogDto, description: 'A new immutable version of the operator\'s prices for this organization; calls that start from effectiveFrom on are billed with it.' })
  @ApiErrors(400, 404)
  async createCatalogVersion(
    @Param('id', new ZodValidationPipe(organizationIdParam)) id: string,
    @Body(new ZodValidationPipe(newCatalogVersionBody)) body: NewCatalogVersionBodyDto,
  ) {
    const created = await this.organizations.createOperatorCatalogVersion(id, { prices: body.prices, currency: body.currency, effectiveFrom: body.effectiveFrom });
    if (!created) throw organizationNotFound(id);
    return catalogView(created);
  }
}

function organizationNotFound(id: string): NotFoundException {
  return new NotFoundException({ statusCode: 404, error: 'Not Found', code: 'organization_not_found', message: `No organization ${id}.` });
}

function overCap(cap: number): BadRequestException {
  return new BadRequestException({
    statusCode: 400,
    error: 'Bad Request',
    code: 'validation_failed',
    message: `maxConcurrentCalls may be at most ${cap}, the cap for this organization.`,
    details: [{ path: 'maxConcurrentCalls', message: `must be at most ${cap}` }],
  });
}
