// The organization-scoped reads of the calls table: the paged list, the live-view poll, and one call's detail.
import { PrismaService } from '../prisma.service';
import { invalidInput } from '../persistence.errors';
import { isUuid } from '../uuid';
import { decodeCallCursor, encodeCallCursor } from './call-cursor';
import { callListFilterWhere, type CallListFilters } from './call-list-filters';
import { CallDetail, CallPage, CallRecord, OMIT_INTERNAL_COLUMNS, toCallEventRecord, toCallRecord } from './call-records';
import { toToolInvocationRecord, toTranscriptTurnRecord, toTurnLatencyRecord } from './conversation-records';

export const CALL_LIST_MAX_LIMIT = 200;

export interface ListCallsInput {
  organizationId: string;
  limit: number;
  /** Only valid together with the same `filters` as the page that returned it (see CallListFilters). */
  cursor?: string | null;
  filters?: CallListFilters;
}

/**
 * One page of the organization's calls, newest first (keyset pagination on createdAt, id),
 * optionally narrowed by filters. Filters narrow the rows; they never change the order, so a
 * filtered list pages exactly like an unfiltered one.
 */
export async function listCalls(prisma: PrismaService, input: ListCallsInput): Promise<CallPage> {
  const { organizationId, limit } = input;
  if (!Number.isInteger(limit) || limit < 1 || limit > CALL_LIST_MAX_LIMIT) {
    throw invalidInput(`limit must be an integer from 1 to ${CALL_LIST_MAX_LIMIT}`);
  }
  const after = input.cursor ? decodeCallCursor(input.cursor) : null;
  const filterWhere = callListFilterWhere(input.filters);
  if (!isUuid(organizationId)) return { items: [], nextCursor: null };
  const rows = await prisma.call.findMany({
    where: {
      organizationId,
      ...filterWhere,
      ...(after && {
        OR: [{ createdAt: { lt: after.createdAt } }, { createdAt: after.createdAt, id: { lt: after.id } }],
      }),
    },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: limit + 1,
    omit: OMIT_INTERNAL_COLUMNS,
  });
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    items: page.map(toCallRecord),
    nextCursor: rows.length > limit && last ? encodeCallCursor(last) : null,
  };
}

/**
 * The organization's calls whose row changed at or after `since` (started, answered, ended,
 * priced), oldest change first, at most `limit`: what a live view polls.
 */
export async function listCallsUpdatedSince(prisma: PrismaService, organizationId: string, since: Date, limit: number): Promise<CallRecord[]> {
  if (!isUuid(organizationId)) return [];
  const rows = await prisma.call.findMany({
    where: { organizationId, updatedAt: { gte: since } },
    orderBy: [{ updatedAt: 'asc' }, { id: 'asc' }],
    take: limit,
    omit: OMIT_INTERNAL_COLUMNS,
  });
  return rows.map(toCallRecord);
}

/**
 * The call with its event log and conversation records (transcript, tool invocations, latency
 * waterfalls), or null when missing or owned by another organization.
 */
export async function findCallDetail(prisma: PrismaService, organizationId: string, id: string): Promise<CallDetail | null> {
  if (!isUuid(id) || !isUuid(organizationId)) return null;
  const row = await prisma.call.findFirst({
    where: { id, organizationId },
    omit: OMIT_INTERNAL_COLUMNS,
    include: {
      events: { orderBy: [{ at: 'asc' }, { id: 'asc' }] },
      transcriptTurns: { orderBy: { index: 'asc' } },
      // Parallel tool calls share a start offset: the tiebreakers only make the order stable.
      toolInvocations: { orderBy: [{ startedAtMs: 'asc' }, { createdAt: 'asc' }, { id: 'asc' }] },
      turnLatencies: { orderBy: { turnIndex: 'asc' } },
    },
  });
  if (!row) return null;
  const { events, transcriptTurns, toolInvocations, turnLatencies, ...call } = row;
  return {
    ...toCallRecord(call),
    events: events.map(toCallEventRecord),
    transcript: transcriptTurns.map(toTranscriptTurnRecord),
    toolInvocations: toolInvocations.map(toToolInvocationRecord),
    latency: turnLatencies.map(toTurnLatencyRecord),
  };
}
