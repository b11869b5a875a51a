import type { PinoLogger } from 'nestjs-pino';
import { CallEventBuffer } from '../../../apps/server/src/call-runtime/records/call-event-buffer';
import {
  ConversationRecordBuffer,
  type ConversationRecordStore,
} from '../../../apps/server/src/call-runtime/records/conversation-record-buffer';
import { ConversationRecordRepository } from '../../../libs/persistence/src/repositories/conversation-record.repository';
import { createRepositories, createTestPrisma } from '../../support/database';
import { createInboundCall } from './call-fixtures';

/**
 * The server's recorder against the real repository: what the runtime reports ends up in the
 * call detail, and a write that failed because the database was unreachable is stored later.
 */
describe('ConversationRecordBuffer with the real repository', () => {
  const prisma = createTestPrisma();
  // Nothing listens on port 1: every query fails with a refused connection.
  const unreachable = createTestPrisma(1, 'postgresql://switchboard@127.0.0.1:1/switchboard');
  const repos = createRepositories(prisma);
  const warnings: string[] = [];
  const logger = {
    warn: (_fields: unknown, message: string) => warnings.push(message),
    error: (_fields: unknown, message: string) => warnings.push(message),
  } as unknown as PinoLogger;

  afterAll(async () => {
    await prisma.$disconnect();
    await unreachable.$disconnect();
  });

  it('stores transcript, tools, merged latency and events after an outage, as findDetail shows them', async () => {
    const { callId, organizationId } = await createInboundCall(repos);
    let target = new ConversationRecordRepository(unreachable);
    // Delegates to whichever database is "up" at the time of the write.
    const store: ConversationRecordStore = {
      appendTranscriptTurns: (id, items) => target.appendTranscriptTurns(id, items),
      insertToolInvocations: (id, items) => target.insertToolInvocations(id, items),
      upsertTurnLatencies: (id, items) => target.upsertTurnLatencies(id, items),
    };
    const events = new CallEventBuffer(callId, repos.callEvents, logger);
    const buffer = new ConversationRecordBuffer(callId, store, events, logger);

    buffer.transcriptTurn({ index: 0, role: 'assistant', source: 'first_message', text: 'Hi!', heardText: null, interrupted: false, startMs: 120, endMs: 900 });
    buffer.transcriptTurn({ index: 1, role: 'user', source: 'speech', text: 'Where is my order?', heardText: null, interrupted: false, startMs: 1500, endMs: 2600 });
    buffer.toolInvocation({ toolCallId: 'call_1', name: 'lookup_order', arguments: { id: 7 }, result: { status: 'shipped' }, error: null, startedAtMs: 3000, latencyMs: 41.5 });
    buffer.turnLatency({ turnIndex: 2, endOfSpeechMs: 2600.5, endOfTurnFrameMs: 2895.5, interruptedAtMs: null, endOfTurnMs: 2900, asrFinalMs: 2750, llmFirstTokenMs: 3300, ttsFirstByteMs: 3450, firstFrameSentMs: 3460.25, firstMarkEchoedMs: null });

    await buffer.flush();
    expect(warnings).toContain('conversation records not stored yet; will retry');
    expect(await prisma.transcriptTurn.count({ where: { callId } })).toBe(0);

    target = new ConversationRecordRepository(prisma);
    buffer.turnLatency({ turnIndex: 2, endOfSpeechMs: null, endOfTurnFrameMs: null, interruptedAtMs: null, endOfTurnMs: null, asrFinalMs: null, llmFirstTokenMs: null, ttsFirstByteMs: null, firstFrameSentMs: null, firstMarkEchoedMs: 3700 });
    buffer.event('barge_in', { turnIndex: 2 });
    await buffer.close();

    const detail = await repos.calls.findDetail(organizationId, callId);
    expect(detail?.transcript.map((t) => t.text)).toEqual(['Hi!', 'Where is my order?']);
    expect(detail?.toolInvocations).toEqual([expect.objectContaining({ toolCallId: 'call_1', result: { status: 'shipped' }, latencyMs: 41.5 })]);
    expect(detail?.latency).toEqual([
      expect.objectContaining({ turnIndex: 2, endOfSpeechMs: 2600.5, firstFrameSentMs: 3460.25, firstMarkEchoedMs: 3700, voiceToVoiceMs: 859.75 }),
    ]);
    expect(detail?.events.map((e) => e.type)).toEqual(['barge_in']);
  });
});
