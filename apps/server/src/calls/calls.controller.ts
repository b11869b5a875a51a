import { Controller, Get, NotFoundException, Param, Query, UseGuards } from '@nestjs/common';
import { CallRepository } from '@switchboard/persistence';
import { z } from 'zod';
import { ApiKeyGuard, type ApiPrincipal } from '../auth/api-key.guard';
import { Principal } from '../auth/principal.decorator';
import { ZodValidationPipe } from '../common/zod-validation.pipe';

const listCallsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().min(1).max(512).optional(),
});

const callIdParam = z.string().min(1).max(64);

/** Read access to call records, scoped to the API key's organization. */
@Controller('v1/calls')
@UseGuards(ApiKeyGuard)
export class CallsController {
  constructor(private readonly calls: CallRepository) {}

  @Get()
  async list(
    @Principal() principal: ApiPrincipal,
    @Query(new ZodValidationPipe(listCallsQuery)) query: z.infer<typeof listCallsQuery>,
  ) {
    const page = await this.calls.list({ organizationId: principal.organizationId, limit: query.limit, cursor: query.cursor });
    return { data: page.items, nextCursor: page.nextCursor ?? null };
  }

  @Get(':id')
  async detail(@Principal() principal: ApiPrincipal, @Param('id', new ZodValidationPipe(callIdParam)) id: string) {
    const call = await this.calls.findDetail(principal.organizationId, id);
    // Another organization's call is indistinguishable from a missing one.
    if (!call) throw new NotFoundException({ statusCode: 404, error: 'Not Found', code: 'call_not_found', message: `No call ${id}.` });
    return call;
  }
}
