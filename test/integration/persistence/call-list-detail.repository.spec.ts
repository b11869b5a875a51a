import { encodeCallCursor } from '../../../libs/persistence/src/repositories/call-cursor';
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
