import type { PrismaService } from '../../../libs/persistence/src/prisma.service';
import { CallEventRepository } from '../../../libs/persistence/src/repositories/call-event.repository';
import { ConversationRecordRepository } from '../../../libs/persistence/src/repositories/conversation-record.repository';
import type { TranscriptTurnInput } from '../../../libs/persistence/src/repositories/conversation-records';
import { countingPrisma, createRepositories, createTestPrisma } from '../../support/database';
import { createInboundCall } from './call-fixtures';

/**
 * The repository writes the server's group commit uses (apps/server/src/call-runtime/records/record-batching):
 * several calls' records in one statement, each call failing alone.
 */
const MISSING_CALL = '00000000-0000-4000-8000-000000000000';

function turn(index: number, text = `turn ${index}`): TranscriptTurnInput {
  return { index, role: index % 2 === 0 ? 'assistant' : 'user', source: 'speech', text, heardText: null, interrupted: false, startMs: index * 1000, endMs: index * 1000 + 800 };
}

describe('Group-commit writes (several calls per statement)', () => {
  const prisma = createTestPrisma();
  const repos = createRepositories(prisma);

  afterAll(() => prisma.$disconnect());

  /** The repository over a client that counts the operations it issues. */
  function counted<T>(make: (client: PrismaService) => T): { repository: T; operations: string[] } {
    const { client, operations } = countingPrisma(prisma);
    return { repository: make(client), operations };
  }

  it("appendForCalls() writes every call's events in one statement, in order, and fails only the missing and the invalid call", async () => {
    const first = await createInboundCall(repos);
    const second = await createInboundCall(repos);
    const { repository, operations } = counted((client) => new CallEventRepository(client));
    const at = new Date();
    const failures = await repository.appendForCalls([
      { callId: first.callId, events: [{ type: 'a1', at }, { type: 'a2', at, payload: { n: 2 } }] },
      { callId: MISSING_CALL, events: [{ type: 'lost', at }] },
      { callId: second.callId, events: [{ type: 'b1', at }] },
      { callId: 'not-a-uuid', events: [{ type: 'x', at }] },
    ]);
    expect(operations).toEqual(['$queryRaw']);
    expect([...failures.entries()].map(([callId, error]) => [callId, (error as { code: string }).code]).sort()).toEqual(
      [[MISSING_CALL, 'not_found'], ['not-a-uuid', 'not_found']].sort(),
    );
    expect((await repos.callEvents.listForCall(first.callId)).map((event) => event.type)).toEqual(['a1', 'a2']);
    expect((await repos.callEvents.listForCall(second.callId)).map((event) => event.type)).toEqual(['b1']);

    const invalid = await repository.appendForCalls([
      { callId: first.callId, events: [{ type: '', at }] },
      { callId: second.callId, events: [{ type: 'b2', at }] },
    ]);
    expect((invalid.get(first.callId) as { code: string }).code).toBe('invalid_input');
    expect(invalid.has(second.callId)).toBe(false);
    expect((await repos.callEvents.listForCall(second.callId)).map((event) => event.type)).toEqual(['b1', 'b2']);
  });

  it('appendTranscriptTurnsForCalls() writes several calls in one transaction and skips turns already stored', async () => {
    const first = await createInboundCall(repos);
    const second = await createInboundCall(repos);
    const repository = new ConversationRecordRepository(prisma);
    const failures = await repository.appendTranscriptTurnsForCalls([
      { callId: first.callId, turns: [turn(1), turn(2)] },
      { callId: second.callId, turns: [turn(1, 'second call')] },
      { callId: MISSING_CALL, turns: [turn(1)] },
    ]);
    expect([...failures.keys()]).toEqual([MISSING_CALL]);

    const again = await repository.appendTranscriptTurnsForCalls([{ callId: first.callId, turns: [turn(2, 'retried'), turn(3)] }]);
    expect(again.size).toBe(0);
    const detail = await repos.calls.findDetail(first.organizationId, first.callId);
    expect(detail?.transcript.map((row) => [row.index, row.text])).toEqual([[1, 'turn 1'], [2, 'turn 2'], [3, 'turn 3']]);
    expect((await repos.calls.findDetail(second.organizationId, second.callId))?.transcript.map((row) => row.text)).toEqual(['second call']);
  });

  it('upsertTurnLatenciesForCalls() merges each call\'s waterfalls in one statement', async () => {
    const first = await createInboundCall(repos);
    const second = await createInboundCall(repos);
    const { repository, operations } = counted((client) => new ConversationRecordRepository(client));
    const failures = await repository.upsertTurnLatenciesForCalls([
      { callId: first.callId, items: [{ turnIndex: 2, endOfSpeechMs: 1000, firstFrameSentMs: 1700 }] },
      { callId: second.callId, items: [{ turnIndex: 2, endOfSpeechMs: 5000 }] },
      { callId: MISSING_CALL, items: [{ turnIndex: 2, endOfSpeechMs: 1 }] },
      { callId: first.callId.slice(0, 8), items: [{ turnIndex: -1 }] },
    ]);
    expect(operations).toEqual(['$queryRaw']);
    expect([...failures.keys()].sort()).toEqual([MISSING_CALL, first.callId.slice(0, 8)].sort());
    await repository.upsertTurnLatenciesForCalls([{ callId: first.callId, items: [{ turnIndex: 2, firstMarkEchoedMs: 1800 }] }]);
    const waterfall = (await repos.calls.findDetail(first.organizationId, first.callId))?.latency[0];
    expect(waterfall).toMatchObject({ turnIndex: 2, endOfSpeechMs: 1000, firstFrameSentMs: 1700, firstMarkEchoedMs: 1800 });
    expect((await repos.calls.findDetail(second.organizationId, second.callId))?.latency[0]).toMatchObject({ endOfSpeechMs: 5000 });
  });
});
