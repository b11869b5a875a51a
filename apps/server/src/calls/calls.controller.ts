import { Controller, Get, Param, Query, Res, UseGuards } from '@nestjs/common';
import { ApiOkResponse, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { CALL_DIRECTIONS, CallAnalysisRepository, CallRepository, CostRepository, TWILIO_CALL_STATUSES } from '@switchboard/persistence';
import { callAnalysisView } from '../analysis/call-analysis-view';
import { z } from 'zod';
import { ApiKeyGuard, type ApiPrincipal } from '../auth/api-key.guard';
import { Principal } from '../auth/principal.decorator';
import { isoTimestamp } from '../common/query-timestamps';
import { ZodValidationPipe } from '../common/zod-validation.pipe';
import { ApiErrors, ApiKeyAuthenticated, createApiDto } from '../openapi/api-schemas';
import { CallDetailDto, CallPageDto } from './call-responses.schema';
import { callNotFound } from './outbound-call-errors';
import { callIdParam } from './outbound-call-requests.schema';
import { callCostView } from '../costs/cost-responses.schema';
import { LIVE_FEED_MAX_MS, LiveCallFeedService } from './live-call-feed.service';


/**
 * GET /v1/calls query. Filters combine (AND) and narrow the list without changing its order.
 * A `cursor` is only valid with the same filters as the request that returned it: it marks a
 * position in the full newest-first order, not in the filtered list.
 */
const listCallsQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(100).default(20),
    cursor: z.string().min(1).max(512).optional(),
    agentId: z.guid().optional(),
    /** One status or a comma-separated list (`status=completed,failed`): any of them matches. */
    status: z
      .string()
      .transform((value) => value.split(',').map((part) => part.trim()))
      .pipe(z.array(z.enum(TWILIO_CALL_STATUSES)).min(1))
      .optional(),
    direction: z.enum(CALL_DIRECTIONS).optional(),
    /** startedAt >= from. */
    from: isoTimestamp.optional(),
    /** startedAt < to, so back-to-back ranges never share a call. */
    to: isoTimestamp.optional(),
  })
  .refine((query) => !(query.from && query.to) || query.from.getTime() < query.to.getTime(), {
    path: ['to'],
    message: 'to must be after from',
  });

class ListCallsQueryDto extends createApiDto(listCallsQuery) {}

/** Read access to call records, scoped to the API key's organization. */
@ApiTags('Calls')
@ApiKeyAuthenticated()
@Controller('v1/calls')
@UseGuards(ApiKeyGuard)
export class CallsController {
  constructor(
    private readonly calls: CallRepository,
    private readonly costs: CostRepository,
    private readonly analyses: CallAnalysisRepository,
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
  live(@Principal() principal: ApiPrincipal, @Res() response: Response): void {
    this.liveFeed.open(principal.organizationId, response);
  }

  @Get(':id')
  @ApiOkResponse({ type: CallDetailDto, description: 'The call with its events, transcript, tool invocations, latency waterfalls, cost and post-call analysis.' })
  @ApiErrors(404)
  async detail(@Principal() principal: ApiPrincipal, @Param('id', new ZodValidationPipe(callIdParam)) id: string) {
    const call = await this.calls.findDetail(principal.organizationId, id);
    // Another organization's call is indistinguishable from a missing one.
    if (!call) throw callNotFound(id);
    const [cost, analysis] = await Promise.all([this.costs.callCost(principal.organizationId, call.id), this.analyses.find(principal.organizationId, call.id)]);
    return { ...call, cost: callCostView(call.id, cost), analysis: analysis ? callAnalysisView(analysis) : null };
  }
}
