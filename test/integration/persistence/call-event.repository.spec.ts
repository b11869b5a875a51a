import { CALL_EVENT_MAX_BATCH, CallEventRepository } from '../../../libs/persistence/src/repositories/call-event.repository';
import { countingPrisma, createRepositories, createTestPrisma } from '../../support/database';
import { createInboundCall } from './call-fixtures';

describe('CallEventRepository', () => {
  const prisma = createTestPrisma();
  const repos = createRepositories(prisma);

  afterAll(() => prisma.$disconnect());

  it('appendMany() writes a batch in one INSERT, ids in array order, offsets from the call start', async () => {
    const { callId } = await createInboundCall(repos);
    const start = (await repos.calls.findById(callId))!.startedAt.getTime();
    const batch = Array.from({ length: 250 }, (_, i) => ({
      type: i % 2 === 0 ? 'mark' : 'dtmf',
      at: new Date(start + 20 * i),
      payload: { i, nested: { ok: true }, list: [1, 'two', null] },
    }));

    // Count the database operations the repository issues for the whole batch.
    const { client, operations } = countingPrisma(prisma);
    await new CallEventRepository(client).appendMany(callId, batch);
    expect(operations).toEqual(['$executeRaw']);

    const stored = await repos.callEvents.listForCall(callId);
    expect(stored).toHaveLength(250);
    expect(stored.map((e) => (e.payload as { i: number }).i)).toEqual(batch.map((_, i) => i));
    const ids = stored.map((e) => BigInt(e.id));
    expect(ids.every((id, i) => i === 0 || id > ids[i - 1]!)).toBe(true);
    expect(stored[10]).toMatchObject({ type: 'mark', offsetMs: 200, payload: { i: 10, nested: { ok: true }, list: [1, 'two', null] } });
  });

  it('keeps an explicit offsetMs and defaults the payload to {}', async () => {
    const { callId } = await createInboundCall(repos);
    await repos.callEvents.append(callId, { type: 'error', at: new Date(), offsetMs: 1234.4 });
    const [event] = await repos.callEvents.listForCall(callId);
    expect(event).toMatchObject({ type: 'error', offsetMs: 1234, payload: {} });
  });

  it('rejects a batch for an unknown call, and bad events, writing nothing', async () => {
    const { callId } = await createInboundCall(repos);
    await expect(
      repos.callEvents.appendMany('00000000-0000-4000-8000-000000000000', [{ type: 'mark', at: new Date() }]),
    ).rejects.toMatchObject({ code: 'not_found' });
    await expect(repos.callEvents.append('garbage', { type: 'mark', at: new Date() })).rejects.toMatchObject({ code: 'not_found' });

    const circular: Record<string, unknown> = {};
    circular['self'] = circular;
    await expect(
      repos.callEvents.appendMany(callId, [
        { type: 'mark', at: new Date() },
        { type: 'mark', at: new Date(), payload: circular },
      ]),
    ).rejects.toMatchObject({ code: 'invalid_input', message: expect.stringContaining('#1') });
    await expect(repos.callEvents.append(callId, { type: '', at: new Date() })).rejects.toMatchObject({ code: 'invalid_input' });
    await expect(repos.callEvents.append(callId, { type: 'x', at: new Date(Number.NaN) })).rejects.toMatchObject({
      code: 'invalid_input',
    });
    const tooMany = Array.from({ length: CALL_EVENT_MAX_BATCH + 1 }, () => ({ type: 'mark', at: new Date() }));
    await expect(repos.callEvents.appendMany(callId, tooMany)).rejects.toMatchObject({ code: 'invalid_input' });
    await expect(repos.callEvents.listForCall(callId)).resolves.toEqual([]);
    await expect(repos.callEvents.appendMany(callId, [])).resolves.toBeUndefined();
  });
});
