import { CALL_DIRECTIONS, TWILIO_CALL_STATUSES } from '@switchboard/persistence';
import { z } from 'zod';
import { isoTimestamp } from '../common/query-timestamps';
import { createApiDto } from '../openapi/api-schemas';

/**
 * GET /v1/calls query. Filters combine (AND) and narrow the list without changing its order.
 * A `cursor` is only valid with the same filters as the request that returned it: it marks a
 * position in the full newest-first order, not in the filtered list.
 */
export const listCallsQuery = z
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

export class ListCallsQueryDto extends createApiDto(listCallsQuery) {}
