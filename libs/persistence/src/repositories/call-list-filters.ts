import type { Prisma } from '../generated/prisma/client';
import { invalidInput } from '../persistence.errors';
import { isUuid } from '../uuid';
import { isTwilioCallStatus, type TwilioCallStatus } from './call-status';

export const CALL_DIRECTIONS = ['inbound', 'outbound', 'web'] as const;
export type CallDirection = (typeof CALL_DIRECTIONS)[number];

/**
 * Optional narrowing of CallRepository.list(); every given filter must match (AND).
 * A cursor is a position in the (createdAt, id) order and does not carry the filters: page on
 * with the same filters the cursor's page was listed with, or the pages neither cover nor
 * exclude what a client would expect.
 */
export interface CallListFilters {
  agentId?: string;
  /** Any of these Twilio CallStatus values. */
  statuses?: readonly TwilioCallStatus[];
  direction?: CallDirection;
  /** startedAt >= startedFrom (inclusive). */
  startedFrom?: Date;
  /** startedAt < startedBefore (exclusive), so consecutive ranges never share a call. */
  startedBefore?: Date;
}

/**
 * Checks the filters and turns them into a Prisma where fragment. The API validates first;
 * this guards other callers, because a malformed uuid would surface as a database error and an
 * empty status list or an inverted range would silently list nothing.
 */
export function callListFilterWhere(filters: CallListFilters = {}): Prisma.CallWhereInput {
  const { agentId, statuses, direction, startedFrom, startedBefore } = filters;
  if (agentId !== undefined && !isUuid(agentId)) throw invalidInput('agentId must be a uuid');
  if (statuses !== undefined) {
    if (statuses.length === 0) throw invalidInput('statuses must name at least one status when given');
    // Typed callers cannot pass an unknown status, but untyped ones (JS, casts) can.
    const unknown = (statuses as readonly string[]).find((status) => !isTwilioCallStatus(status));
    if (unknown !== undefined) throw invalidInput(`Unknown Twilio CallStatus '${unknown}'`);
  }
  if (direction !== undefined && !(CALL_DIRECTIONS as readonly string[]).includes(direction)) {
    throw invalidInput(`direction must be one of ${CALL_DIRECTIONS.join(', ')}`);
  }
  for (const [name, date] of [['startedFrom', startedFrom], ['startedBefore', startedBefore]] as const) {
    if (date !== undefined && Number.isNaN(date.getTime())) throw invalidInput(`${name} must be a valid date`);
  }
  if (startedFrom && startedBefore && startedFrom.getTime() >= startedBefore.getTime()) {
    throw invalidInput('startedFrom must be before startedBefore');
  }
  return {
    ...(agentId !== undefined && { agentId }),
    ...(statuses !== undefined && { status: { in: [...new Set(statuses)] } }),
    ...(direction !== undefined && { direction }),
    ...((startedFrom || startedBefore) && {
      startedAt: { ...(startedFrom && { gte: startedFrom }), ...(startedBefore && { lt: startedBefore }) },
    }),
  };
}
