import { Controller, Get, Param, Query, Res, UseGuards } from '@nestjs/common';
import { ApiOkResponse, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { callAnalysisView } from '../analysis/call-analysis-view';
import { ApiKeyGuard, type ApiPrincipal } from '../auth/api-key.guard';
import { Principal } from '../auth/principal.decorator';
import { ZodValidationPipe } from '../common/zod-validation.pipe';
import { ApiErrors, ApiKeyAuthenticated } from '../openapi/api-schemas';
import { CallRecordsService } from './call-records.service';
import { listCallsQuery, ListCallsQueryDto } from './call-requests.schema';
import { CallDetailDto, CallPageDto } from './call-responses.schema';
import { callNotFound } from './outbound-call-errors';
import { callIdParam } from './outbound-call-requests.schema';
import { callCostView } from '../billing/costs-api/cost-responses.schema';
import { LIVE_FEED_MAX_MS, LiveCallFeedService } from './live-call-feed.service';


/** Read access to call records, scoped to the API key's organization. */
@ApiTags('Calls')
@ApiKeyAuthenticated()
@Controller('v1/calls')
@UseGuards(ApiKeyGuard)
export class CallsController {
  constructor(
    private readonly calls: CallRecordsService,
    private readonly liveFeed: LiveCallFeedService,
  ) {}

  @Get()
  @ApiOkResponse({ type: CallPageDto, description: 'Newest first; filters combine (AND).' })
  @ApiErrors(400)
  async list(
    @Principal() principal: ApiPrincipal,
    @Query(new ZodValidationPipe(listCallsQuery)) query: ListCallsQueryDto,
  ) {
    const page = await this.calls.list({
      organizationId: principal.organizationId,
      limit: query.limit,
      cursor: query.cursor,
      filters: {
        agentId: query.agentId,
        statuses: query.status,
        direction: query.direction,
        startedFrom: query.from,
        startedBefore: query.to,
      },
    });
    return { data: page.items, nextCursor: page.nextCursor ?? null };
  }

  /** Declared before `:id`, which would otherwise take "live" for an id. */
  @Get('live')
  @ApiProduces('text/event-stream')
  @ApiOkResponse({
    schema: { type: 'string', example: 'event: call\ndata: {"id":"…","direction":"web","status":"in-progress",…}\n\n' },
    description:
      `Server-sent events: \`event: call\` with the call (as in the list) each time one of the organization's calls changes, from a few seconds before the request on. ` +
      `Comment lines keep the stream alive; the stream ends after ${LIVE_FEED_MAX_MS / 60_000} minutes (reconnect; the key is checked again).`,
  })
  @ApiErrors(429)
  live(@Principal() principal: ApiPrincipal, @Res() response: Response): Promise<void> {
    return this.liveFeed.open(principal.organizationId, response);
  }

  @Get(':id')
  @ApiOkResponse({ type: CallDetailDto, description: 'The call with its events, transcript, tool invocations, latency waterfalls, cost and post-call analysis.' })
  @ApiErrors(404)
  async detail(@Principal() principal: ApiPrincipal, @Param('id', new ZodValidationPipe(callIdParam)) id: string) {
    const found = await this.calls.detail(principal.organizationId, id);
    // Another organization's call is indistinguishable from a missing one.
    if (!found) throw callNotFound(id);
    const { call, cost, analysis } = found;
    return { ...call, cost: callCostView(call.id, cost), analysis: analysis ? callAnalysisView(analysis) : null };
  }
}
