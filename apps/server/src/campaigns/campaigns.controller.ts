import { Body, Controller, Get, HttpCode, HttpStatus, Param, Post, Query, UseGuards } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { ApiKeyGuard, type ApiPrincipal } from '../auth/api-key.guard';
import { Principal } from '../auth/principal.decorator';
import { RequireScope } from '../auth/require-scope.decorator';
import { ZodValidationPipe } from '../common/zod-validation.pipe';
import { ApiErrors, ApiKeyAuthenticated } from '../openapi/api-schemas';
import {
  campaignIdParam,
  createCampaignBody,
  CreateCampaignBodyDto,
  listCampaignContactsQuery,
  ListCampaignContactsQueryDto,
  listCampaignsQuery,
  ListCampaignsQueryDto,
} from './campaign-requests.schema';
import { CampaignContactPageDto, CampaignDto, CampaignPageDto } from './campaign-responses.schema';
import { CampaignsService } from './campaigns.service';

/**
 * Outbound campaigns: a list of contacts called by an agent within calling windows, a few at a
 * time, with retries. Writes need `admin`; another organization's campaign is a 404.
 */
@ApiTags('Campaigns')
@ApiKeyAuthenticated()
@Controller('v1/campaigns')
@UseGuards(ApiKeyGuard)
export class CampaignsController {
  constructor(private readonly campaigns: CampaignsService) {}

  @Post()
  @RequireScope('admin')
  @HttpCode(HttpStatus.CREATED)
  @ApiCreatedResponse({
    type: CampaignDto,
    description:
      'The campaign, running: the dialer calls its contacts from schedule.start, inside the calling windows of each contact\'s time zone, ' +
      'at most maxConcurrentCalls at once (and within the organization\'s concurrency limit and budget), retrying busy / no-answer / voicemail as `retry` says. ' +
      '400 `validation_failed` names each field (a CSV problem names its line: `contactsCsv.4.to`), `agent_not_found`, `from_number_not_owned`, `voicemail_...`; 503 `twilio_not_configured`.',
  })
  @ApiErrors(400, 403)
  create(@Principal() principal: ApiPrincipal, @Body(new ZodValidationPipe(createCampaignBody)) body: CreateCampaignBodyDto) {
    return this.campaigns.create(principal.organizationId, body);
  }

  @Get()
  @ApiOkResponse({ type: CampaignPageDto, description: 'Newest first, each with its progress.' })
  @ApiErrors(400)
  list(@Principal() principal: ApiPrincipal, @Query(new ZodValidationPipe(listCampaignsQuery)) query: ListCampaignsQueryDto) {
    return this.campaigns.list(principal.organizationId, query.limit, query.cursor);
  }

  @Get(':id')
  @ApiOkResponse({ type: CampaignDto, description: 'Settings and progress: contacts by status, finished contacts by outcome, calls placed.' })
  @ApiErrors(404)
  get(@Principal() principal: ApiPrincipal, @Param('id', new ZodValidationPipe(campaignIdParam)) id: string) {
    return this.campaigns.get(principal.organizationId, id);
  }

  @Get(':id/contacts')
  @ApiOkResponse({ type: CampaignContactPageDto, description: 'Contacts in their order, each with its status, outcome, attempts and calls.' })
  @ApiErrors(400, 404)
  async contacts(
    @Principal() principal: ApiPrincipal,
    @Param('id', new ZodValidationPipe(campaignIdParam)) id: string,
    @Query(new ZodValidationPipe(listCampaignContactsQuery)) query: ListCampaignContactsQueryDto,
  ) {
    const page = await this.campaigns.contacts(principal.organizationId, id, { limit: query.limit, cursor: query.cursor, status: query.status });
    return { data: page.items, nextCursor: page.nextCursor };
  }

  @Post(':id/pause')
  @RequireScope('admin')
  @HttpCode(HttpStatus.OK)
  @ApiOkResponse({ type: CampaignDto, description: 'No new calls until resumed; calls in progress go on. 409 `campaign_finished` once completed or cancelled.' })
  @ApiErrors(403, 404, 409)
  pause(@Principal() principal: ApiPrincipal, @Param('id', new ZodValidationPipe(campaignIdParam)) id: string) {
    return this.campaigns.pause(principal.organizationId, id);
  }

  @Post(':id/resume')
  @RequireScope('admin')
  @HttpCode(HttpStatus.OK)
  @ApiOkResponse({ type: CampaignDto, description: 'Dialing again (a campaign paused for a reason that still holds is paused again by its next call).' })
  @ApiErrors(403, 404, 409)
  resume(@Principal() principal: ApiPrincipal, @Param('id', new ZodValidationPipe(campaignIdParam)) id: string) {
    return this.campaigns.resume(principal.organizationId, id);
  }

  @Post(':id/cancel')
  @RequireScope('admin')
  @HttpCode(HttpStatus.OK)
  @ApiOkResponse({ type: CampaignDto, description: 'Pending contacts are cancelled; calls in progress go on to their end, and are not retried.' })
  @ApiErrors(403, 404, 409)
  cancel(@Principal() principal: ApiPrincipal, @Param('id', new ZodValidationPipe(campaignIdParam)) id: string) {
    return this.campaigns.cancel(principal.organizationId, id);
  }
}
