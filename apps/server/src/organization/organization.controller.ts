import { Body, Controller, Get, Inject, NotFoundException, Patch, UseGuards } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { APP_CONFIG, type AppConfig } from '@switchboard/config';
import { OrganizationRepository, type OrganizationCallUsage } from '@switchboard/persistence';
import { z } from 'zod';
import { ApiKeyGuard, type ApiPrincipal } from '../auth/api-key.guard';
import { Principal } from '../auth/principal.decorator';
import { RequireScope } from '../auth/require-scope.decorator';
import { ZodValidationPipe } from '../common/zod-validation.pipe';
import { ApiErrors, ApiKeyAuthenticated, createApiDto, isoDateTime, uuid } from '../openapi/api-schemas';

/** null = use the deployment default (MAX_CONCURRENT_CALLS_PER_ORG); 0 refuses every call. */
const updateOrganizationBody = z.strictObject({
  maxConcurrentCalls: z.number().int().min(0).max(100_000).nullable(),
});
class UpdateOrganizationBodyDto extends createApiDto(updateOrganizationBody) {}

const organizationSchema = z.strictObject({
  id: uuid,
  name: z.string(),
  createdAt: isoDateTime,
  maxConcurrentCalls: z.number().int().nullable().describe("The organization's own limit; null: the deployment default."),
  effectiveMaxConcurrentCalls: z.number().int().describe('The limit enforced now.'),
  activeCalls: z.number().int(),
  refusedCallsLast24h: z.number().int().describe('Calls refused over the limit in the last 24 hours.'),
  refusedCallsTotal: z.number().int(),
});
class OrganizationDto extends createApiDto(organizationSchema) {}

/** The API key's own organization: its concurrency limit and how much of it is in use. */
@ApiTags('Organization')
@ApiKeyAuthenticated()
@Controller('v1/organization')
@UseGuards(ApiKeyGuard)
export class OrganizationController {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly organizations: OrganizationRepository,
  ) {}

  @Get()
  @ApiOkResponse({ type: OrganizationDto })
  async get(@Principal() principal: ApiPrincipal): Promise<OrganizationCallUsage> {
    return this.usage(principal.organizationId);
  }

  @Patch()
  @RequireScope('admin')
  @ApiOkResponse({ type: OrganizationDto, description: 'Sets the concurrency limit (null: back to the deployment default; 0 refuses every call).' })
  @ApiErrors(400, 403)
  async update(
    @Principal() principal: ApiPrincipal,
    @Body(new ZodValidationPipe(updateOrganizationBody)) body: UpdateOrganizationBodyDto,
  ): Promise<OrganizationCallUsage> {
    if (!(await this.organizations.setMaxConcurrentCalls(principal.organizationId, body.maxConcurrentCalls))) throw organizationGone();
    return this.usage(principal.organizationId);
  }

  private async usage(organizationId: string): Promise<OrganizationCallUsage> {
    const usage = await this.organizations.callUsage(organizationId, this.config.calls.maxConcurrentPerOrg);
    if (!usage) throw organizationGone();
    return usage;
  }
}

/** The key authenticated a moment ago, so its organization was deleted in between. */
function organizationGone(): NotFoundException {
  return new NotFoundException({ statusCode: 404, error: 'Not Found', code: 'organization_not_found', message: 'The organization no longer exists.' });
}
