import { encodeCallCursor } from '../../../libs/persistence/src/repositories/call-cursor';
import type { CallListFilters } from '../../../libs/persistence/src/repositories/call-list-filters';
import { createRepositories, createTestOrganization, createTestPrisma } from '../../support/database';
import { createInboundCall } from './call-fixtures';

describe('CallRepository.list() and findDetail()', () => {
  const prisma = createTestPrisma();
  const repos = createRepositories(prisma);

  afterAll(() => prisma.$disconnect());

  it('pages through every call exactly once, newest first, including calls sharing a createdAt', async () => {
    const org = await createTestOrganization(repos);
    const ids: string[] = [];
    for (let i = 0; i < 11; i++) ids.push((await createInboundCall(repos, { organizationId: org.id })).callId);
    // Force ties on createdAt so that the id tiebreaker is what keeps pages apart.
    const tie = new Date('2030-06-01T00:00:00.000Z');
    await prisma.call.updateMany({ where: { id: { in: ids.slice(3, 8) } }, data: { createdAt: tie } });
    // Another organization's calls must never appear.
    await createInboundCall(repos);

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: Awaited<ReturnType<typeof repos.calls.list>> = await repos.calls.list({ organizationId: org.id, limit: 3, cursor });
      expect(page.items.length).toBeLessThanOrEqual(3);
      seen.push(...page.items.map((c) => c.id));
      cursor = page.nextCursor;
      pages += 1;
    } while (cursor !== null && pages < 10);

    expect(pages).toBe(4);
    expect(new Set(seen).size).toBe(seen.length);
    expect([...seen].sort()).toEqual([...ids].sort());
    const expected = await prisma.call.findMany({
      where: { organizationId: org.id },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      select: { id: true },
    });
    expect(seen).toEqual(expected.map((c) => c.id));
  });

  it('returns no cursor when the page is the last one, and an empty page for an organization without calls', async () => {
    const org = await createTestOrganization(repos);
    await createInboundCall(repos, { organizationId: org.id });
    await createInboundCall(repos, { organizationId: org.id });
    const page = await repos.calls.list({ organizationId: org.id, limit: 2 });
    expect(page.items).toHaveLength(2);
    expect(page.nextCursor).toBeNull();
    const empty = await createTestOrganization(repos);
    await expect(repos.calls.list({ organizationId: empty.id, limit: 5 })).resolves.toEqual({ items: [], nextCursor: null });
  });

  it('rejects bad limits and forged cursors with invalid_input', async () => {
    const org = await createTestOrganization(repos);
    for (const limit of [0, -1, 1.5, 201]) {
      await expect(repos.calls.list({ organizationId: org.id, limit })).rejects.toMatchObject({ code: 'invalid_input' });
    }
    for (const cursor of ['%%%', Buffer.from('{"c":"yesterday","i":"x"}').toString('base64url'), 'e30']) {
      await expect(repos.calls.list({ organizationId: org.id, limit: 5, cursor })).rejects.toMatchObject({ code: 'invalid_input' });
    }
    const valid = encodeCallCursor({ createdAt: new Date(), id: '00000000-0000-4000-8000-000000000000' });
    await expect(repos.calls.list({ organizationId: org.id, limit: 5, cursor: valid })).resolves.toEqual({ items: [], nextCursor: null });
  });

  describe('filters', () => {
    interface SeededCall {
      id: string;
      agentId: string;
      status: string;
      direction: string;
      startedAt: Date;
    }
    const base = Date.parse('2031-03-01T12:00:00.000Z');
    let organizationId: string;
    let agentA: string;
    let agentB: string;
    let seeded: SeededCall[];

    /** Pages through the whole filtered list, returning ids in the order they came. */
    async function listAll(filters: CallListFilters, limit: number): Promise<{ ids: string[]; pages: number }> {
      const ids: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page: Awaited<ReturnType<typeof repos.calls.list>> = await repos.calls.list({ organizationId, limit, cursor, filters });
        ids.push(...page.items.map((c) => c.id));
        cursor = page.nextCursor;
        pages += 1;
      } while (cursor !== null && pages < 20);
      return { ids, pages };
    }

    /** The same selection computed here, in the list's own order (createdAt desc, id desc). */
    async function expectedIds(match: (call: SeededCall) => boolean): Promise<string[]> {
      const wanted = seeded.filter(match).map((c) => c.id);
      const rows = await prisma.call.findMany({
        where: { id: { in: wanted } },
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
        select: { id: true },
      });
      return rows.map((r) => r.id);
    }

    beforeAll(async () => {
      const org = await createTestOrganization(repos);
      organizationId = org.id;
      agentA = (await createInboundCall(repos, { organizationId })).agentId;
      agentB = (await createInboundCall(repos, { organizationId })).agentId;
      // Delete the two helper calls so the seeded set below is the organization's whole list.
      await prisma.call.deleteMany({ where: { organizationId } });
      const plan: Array<Omit<SeededCall, 'id'>> = [];
      const statuses = ['completed', 'failed', 'in-progress', 'no-answer'];
      for (let i = 0; i < 12; i++) {
        plan.push({
          agentId: i % 3 === 0 ? agentB : agentA,
          status: statuses[i % statuses.length]!,
          direction: i % 4 === 1 ? 'outbound' : 'inbound',
          startedAt: new Date(base + i * 60_000),
        });
      }
      seeded = [];
      for (const p of plan) {
        const { callId } = await createInboundCall(repos, { organizationId, agentId: p.agentId, at: p.startedAt });
        await prisma.call.update({ where: { id: callId }, data: { status: p.status, direction: p.direction } });
        seeded.push({ id: callId, ...p });
      }
      // Ties on createdAt, so paging through a filtered list relies on the id tiebreaker too.
      await prisma.call.updateMany({ where: { id: { in: seeded.slice(2, 9).map((c) => c.id) } }, data: { createdAt: new Date(base) } });
      // Another organization's call matching every filter must never appear.
      const other = await createInboundCall(repos, { at: new Date(base + 60_000) });
      await prisma.call.update({ where: { id: other.callId }, data: { status: 'completed' } });
    });

    it.each<[string, () => CallListFilters, (c: SeededCall) => boolean]>([
      ['agentId', () => ({ agentId: agentB }), (c) => c.agentId === agentB],
      ['one status', () => ({ statuses: ['failed'] }), (c) => c.status === 'failed'],
      ['several statuses', () => ({ statuses: ['completed', 'no-answer'] }), (c) => ['completed', 'no-answer'].includes(c.status)],
      ['direction', () => ({ direction: 'outbound' }), (c) => c.direction === 'outbound'],
      [
        'a time range (from inclusive, to exclusive)',
        () => ({ startedFrom: new Date(base + 3 * 60_000), startedBefore: new Date(base + 7 * 60_000) }),
        (c) => c.startedAt.getTime() >= base + 3 * 60_000 && c.startedAt.getTime() < base + 7 * 60_000,
      ],
      ['only a lower bound', () => ({ startedFrom: new Date(base + 10 * 60_000) }), (c) => c.startedAt.getTime() >= base + 10 * 60_000],
      ['only an upper bound', () => ({ startedBefore: new Date(base + 60_000) }), (c) => c.startedAt.getTime() < base + 60_000],
      [
        'agent, statuses, direction and range together',
        () => ({
          agentId: agentA,
          statuses: ['completed', 'failed', 'in-progress'],
          direction: 'inbound',
          startedFrom: new Date(base + 60_000),
          startedBefore: new Date(base + 11 * 60_000),
        }),
        (c) =>
          c.agentId === agentA &&
          ['completed', 'failed', 'in-progress'].includes(c.status) &&
          c.direction === 'inbound' &&
          c.startedAt.getTime() >= base + 60_000 &&
          c.startedAt.getTime() < base + 11 * 60_000,
      ],
    ])('filters by %s', async (_label, filters, match) => {
      const expected = await expectedIds(match);
      expect(expected.length).toBeGreaterThan(0);
      expect(expected.length).toBeLessThan(seeded.length);
      const { ids } = await listAll(filters(), 50);
      expect(ids).toEqual(expected);
    });

    it('pages through a filtered list exactly once, in order, with full pages until the last', async () => {
      const filters: CallListFilters = { agentId: agentA, direction: 'inbound' };
      const expected = await expectedIds((c) => c.agentId === agentA && c.direction === 'inbound');
      expect(expected.length).toBe(6);
      const { ids, pages } = await listAll(filters, 4);
      expect(pages).toBe(2);
      expect(ids).toEqual(expected);
      const { ids: singles, pages: singlePages } = await listAll(filters, 1);
      expect(singlePages).toBe(6);
      expect(singles).toEqual(expected);
    });

    it('returns an empty page when nothing matches', async () => {
      await expect(
        repos.calls.list({ organizationId, limit: 5, filters: { statuses: ['queued'] } }),
      ).resolves.toEqual({ items: [], nextCursor: null });
    });

    it('rejects malformed filters with invalid_input', async () => {
      const bad: CallListFilters[] = [
        { agentId: 'not-a-uuid' },
        { statuses: [] },
        { statuses: ['done' as never] },
        { direction: 'sideways' as never },
        { startedFrom: new Date('nope') },
        { startedFrom: new Date(base), startedBefore: new Date(base) },
        { startedFrom: new Date(base + 1), startedBefore: new Date(base) },
      ];
      for (const filters of bad) {
        await expect(repos.calls.list({ organizationId, limit: 5, filters })).rejects.toMatchObject({ code: 'invalid_input' });
      }
    });
  });

  it('findDetail() returns the call with its events in time order; another organization gets null', async () => {
    const { callId, organizationId } = await createInboundCall(repos);
    const start = (await repos.calls.findById(callId))!.startedAt.getTime();
    await repos.callEvents.appendMany(callId, [
      { type: 'mark', at: new Date(start + 3000), payload: { name: 'greeting-done' } },
      { type: 'stream_start', at: new Date(start + 1000), payload: { streamSid: 'MZ1' } },
    ]);
    await repos.callEvents.append(callId, { type: 'dtmf', at: new Date(start + 2000), payload: { digit: '5' } });

    const detail = await repos.calls.findDetail(organizationId, callId);
    expect(detail?.id).toBe(callId);
    expect(detail?.events.map((e) => e.type)).toEqual(['stream_start', 'dtmf', 'mark']);
    expect(detail?.events.map((e) => e.offsetMs)).toEqual([1000, 2000, 3000]);
    expect(detail?.events[1]).toMatchObject({ callId, payload: { digit: '5' }, id: expect.stringMatching(/^\d+$/) });
    expect(() => JSON.stringify(detail)).not.toThrow();
    expect(detail).not.toHaveProperty('streamTokenHash');

    const other = await createTestOrganization(repos);
    await expect(repos.calls.findDetail(other.id, callId)).resolves.toBeNull();
    await expect(repos.calls.findDetail(organizationId, 'not-a-uuid')).resolves.toBeNull();
    await expect(repos.calls.findDetail(organizationId, '00000000-0000-4000-8000-000000000000')).resolves.toBeNull();
  });
});
