import { ConversationRecordRepository } from '../../../libs/persistence/src/repositories/conversation-record.repository';
import type {
  ToolInvocationInput,
  TranscriptTurnInput,
  TurnLatencyInput,
} from '../../../libs/persistence/src/repositories/conversation-records';
import { createRepositories, createTestPrisma } from '../../support/database';
import { createInboundCall } from './call-fixtures';

const MISSING_CALL = '00000000-0000-4000-8000-000000000000';

function turn(index: number, overrides: Partial<TranscriptTurnInput> = {}): TranscriptTurnInput {
  return {
    index,
    role: index % 2 === 0 ? 'assistant' : 'user',
    source: index === 0 ? 'first_message' : 'speech',
    text: `turn ${index}`,
    heardText: null,
    interrupted: false,
    startMs: index * 1000,
    endMs: index * 1000 + 800,
    ...overrides,
  };
}

function tool(toolCallId: string, startedAtMs: number, overrides: Partial<ToolInvocationInput> = {}): ToolInvocationInput {
  return {
    toolCallId,
    name: 'lookup_order',
    arguments: { orderId: 'A-17', items: [1, 2] },
    result: { status: 'shipped' },
    error: null,
    startedAtMs,
    latencyMs: 12.375,
    ...overrides,
  };
}

function latency(turnIndex: number, fields: Omit<TurnLatencyInput, 'turnIndex'>): TurnLatencyInput {
  return { turnIndex, ...fields };
}

describe('ConversationRecordRepository', () => {
  const prisma = createTestPrisma();
  const repos = createRepositories(prisma);
  const records = new ConversationRecordRepository(prisma);

  afterAll(() => prisma.$disconnect());

  describe('appendTranscriptTurns()', () => {
    it('stores turns with every field, returned in index order whatever the write order', async () => {
      const { callId, organizationId } = await createInboundCall(repos);
      await records.appendTranscriptTurns(callId, [turn(2), turn(0)]);
      await records.appendTranscriptTurns(callId, [
        turn(1, { role: 'user', source: 'dtmf', text: '5', startMs: 1000.4, endMs: 1799.6 }),
        turn(3, { role: 'assistant', text: 'Your order has shipped and', heardText: 'Your order', interrupted: true }),
      ]);

      const detail = await repos.calls.findDetail(organizationId, callId);
      expect(detail?.transcript.map((t) => t.index)).toEqual([0, 1, 2, 3]);
      expect(detail?.transcript[1]).toEqual({
        id: expect.any(String),
        index: 1,
        role: 'user',
        source: 'dtmf',
        text: '5',
        heardText: null,
        interrupted: false,
        // Offsets are whole milliseconds.
        startMs: 1000,
        endMs: 1800,
        createdAt: expect.any(Date),
      });
      expect(detail?.transcript[3]).toMatchObject({ heardText: 'Your order', interrupted: true, role: 'assistant' });
    });

    it('skips a turn whose index is already stored (a retried batch), keeping the first text', async () => {
      const { callId, organizationId } = await createInboundCall(repos);
      await records.appendTranscriptTurns(callId, [turn(0, { text: 'first' }), turn(1)]);
      await records.appendTranscriptTurns(callId, [turn(1, { text: 'retried' }), turn(0, { text: 'again' }), turn(2)]);

      const detail = await repos.calls.findDetail(organizationId, callId);
      expect(detail?.transcript.map((t) => [t.index, t.text])).toEqual([
        [0, 'first'],
        [1, 'turn 1'],
        [2, 'turn 2'],
      ]);
    });

    it('keeps text with characters Postgres cannot store (U+0000) instead of failing the batch', async () => {
      const { callId, organizationId } = await createInboundCall(repos);
      await records.appendTranscriptTurns(callId, [turn(0, { text: 'a\u0000b', heardText: '\u0000' })]);
      const detail = await repos.calls.findDetail(organizationId, callId);
      expect(detail?.transcript[0]).toMatchObject({ text: 'a\uFFFDb', heardText: '\uFFFD' });
    });

    it('rejects a bad turn with invalid_input naming it, and writes nothing of the batch', async () => {
      const { callId, organizationId } = await createInboundCall(repos);
      const bad = [
        [turn(0), turn(1, { source: 'telepathy' as never })],
        [turn(0, { role: 'system' as never })],
        [turn(-1)],
        [turn(1.5)],
        [turn(0, { startMs: Number.NaN })],
        [turn(0, { endMs: 1e12 })],
      ];
      for (const batch of bad) {
        await expect(records.appendTranscriptTurns(callId, batch)).rejects.toMatchObject({
          code: 'invalid_input',
          message: expect.stringMatching(/^Transcript turn #\d/),
        });
      }
      expect((await repos.calls.findDetail(organizationId, callId))?.transcript).toEqual([]);
    });

    it('throws not_found for a missing call; an empty batch is a no-op', async () => {
      await expect(records.appendTranscriptTurns(MISSING_CALL, [turn(0)])).rejects.toMatchObject({ code: 'not_found' });
      await expect(records.appendTranscriptTurns('not-a-uuid', [turn(0)])).rejects.toMatchObject({ code: 'not_found' });
      await expect(records.appendTranscriptTurns(MISSING_CALL, [])).resolves.toBeUndefined();
    });
  });

  describe('insertToolInvocations()', () => {
    it('stores arguments and results as JSON, failures with their error, ordered by start offset', async () => {
      const { callId, organizationId } = await createInboundCall(repos);
      await records.insertToolInvocations(callId, [
        tool('call_b', 5200, { name: 'transfer', arguments: '{not json', result: null, error: 'arguments are not valid JSON' }),
        tool('call_a', 3100.6),
      ]);
      await records.insertToolInvocations(callId, [tool('call_c', 4000, { result: 'plain text', latencyMs: 0.25 })]);

      const detail = await repos.calls.findDetail(organizationId, callId);
      expect(detail?.toolInvocations.map((t) => t.toolCallId)).toEqual(['call_a', 'call_c', 'call_b']);
      expect(detail?.toolInvocations[0]).toEqual({
        id: expect.any(String),
        toolCallId: 'call_a',
        name: 'lookup_order',
        arguments: { orderId: 'A-17', items: [1, 2] },
        result: { status: 'shipped' },
        error: null,
        startedAtMs: 3101,
        // Sub-millisecond latency survives (double precision).
        latencyMs: 12.375,
        createdAt: expect.any(Date),
      });
      expect(detail?.toolInvocations[1]).toMatchObject({ result: 'plain text', latencyMs: 0.25 });
      expect(detail?.toolInvocations[2]).toMatchObject({
        name: 'transfer',
        arguments: '{not json',
        result: null,
        error: 'arguments are not valid JSON',
      });
    });

    it('stores absent arguments as JSON null and rejects values that are not JSON-serialisable', async () => {
      const { callId, organizationId } = await createInboundCall(repos);
      await records.insertToolInvocations(callId, [tool('call_x', 10, { arguments: undefined, result: undefined })]);
      const stored = (await repos.calls.findDetail(organizationId, callId))?.toolInvocations;
      expect(stored).toHaveLength(1);
      expect(stored?.[0]).toMatchObject({ arguments: null, result: null });

      const circular: Record<string, unknown> = {};
      circular['self'] = circular;
      await expect(records.insertToolInvocations(callId, [tool('call_y', 20, { arguments: circular })])).rejects.toMatchObject({
        code: 'invalid_input',
        message: expect.stringContaining('Tool invocation #0 (lookup_order) arguments is not JSON-serialisable'),
      });
      await expect(records.insertToolInvocations(callId, [tool('call_z', 20, { result: 10n })])).rejects.toMatchObject({
        code: 'invalid_input',
      });
      await expect(records.insertToolInvocations(callId, [tool('call_z', 20, { latencyMs: Infinity })])).rejects.toMatchObject({
        code: 'invalid_input',
      });
      await expect(records.insertToolInvocations(MISSING_CALL, [tool('call_z', 20)])).rejects.toMatchObject({ code: 'not_found' });
    });
  });

  describe('upsertTurnLatencies()', () => {
    it('merges a later report into the stored waterfall: non-null fields win, null fields keep what is stored', async () => {
      const { callId, organizationId } = await createInboundCall(repos);
      await records.upsertTurnLatencies(callId, [
        latency(3, { endOfSpeechMs: 5000.25, endOfTurnFrameMs: 5390, endOfTurnMs: 5400.5, asrFinalMs: 5350, llmFirstTokenMs: 5800.125, ttsFirstByteMs: 5950, firstFrameSentMs: 5960.75, firstMarkEchoedMs: null }),
        latency(1, { endOfSpeechMs: 1200, firstFrameSentMs: 1900 }),
      ]);
      await records.upsertTurnLatencies(callId, [latency(3, { firstMarkEchoedMs: 6100.5, endOfTurnMs: null, interruptedAtMs: 6400 })]);

      const detail = await repos.calls.findDetail(organizationId, callId);
      expect(detail?.latency.map((l) => l.turnIndex)).toEqual([1, 3]);
      expect(detail?.latency[1]).toEqual({
        turnIndex: 3,
        endOfSpeechMs: 5000.25,
        endOfTurnFrameMs: 5390,
        endOfTurnMs: 5400.5,
        asrFinalMs: 5350,
        llmFirstTokenMs: 5800.125,
        ttsFirstByteMs: 5950,
        firstFrameSentMs: 5960.75,
        firstMarkEchoedMs: 6100.5,
        interruptedAtMs: 6400,
        voiceToVoiceMs: 960.5,
        createdAt: expect.any(Date),
      });
      expect(detail?.latency[0]).toMatchObject({ turnIndex: 1, endOfTurnMs: null, asrFinalMs: null, voiceToVoiceMs: 700 });
    });

    it('folds reports for one turn within a batch, and derives no voice-to-voice time without both ends', async () => {
      const { callId, organizationId } = await createInboundCall(repos);
      await records.upsertTurnLatencies(callId, [
        latency(0, { firstFrameSentMs: 300 }),
        latency(0, { firstMarkEchoedMs: 450 }),
        latency(0, { firstFrameSentMs: 310 }),
      ]);
      const [stored] = (await repos.calls.findDetail(organizationId, callId))?.latency ?? [];
      expect(stored).toMatchObject({ turnIndex: 0, firstFrameSentMs: 310, firstMarkEchoedMs: 450, endOfSpeechMs: null, voiceToVoiceMs: null });
    });

    it('rejects bad waterfalls and a missing call', async () => {
      const { callId } = await createInboundCall(repos);
      await expect(records.upsertTurnLatencies(callId, [latency(0, { asrFinalMs: Number.NaN })])).rejects.toMatchObject({
        code: 'invalid_input',
        message: expect.stringContaining('asrFinalMs'),
      });
      await expect(records.upsertTurnLatencies(callId, [latency(-2, {})])).rejects.toMatchObject({ code: 'invalid_input' });
      await expect(records.upsertTurnLatencies(MISSING_CALL, [latency(0, { endOfTurnMs: 1 })])).rejects.toMatchObject({
        code: 'not_found',
      });
    });
  });

  it('rejects batches larger than the cap before touching the database', async () => {
    const { callId } = await createInboundCall(repos);
    const many = Array.from({ length: 1001 }, (_, i) => turn(i));
    await expect(records.appendTranscriptTurns(callId, many)).rejects.toMatchObject({ code: 'invalid_input' });
  });

  it('findDetail() returns empty record lists for a call without any, and JSON-serialises the rest', async () => {
    const { callId, organizationId } = await createInboundCall(repos);
    const empty = await repos.calls.findDetail(organizationId, callId);
    expect(empty).toMatchObject({ transcript: [], toolInvocations: [], latency: [] });

    await records.appendTranscriptTurns(callId, [turn(0)]);
    await records.insertToolInvocations(callId, [tool('call_1', 100)]);
    await records.upsertTurnLatencies(callId, [latency(0, { endOfSpeechMs: 0, firstFrameSentMs: 250.5 })]);
    const detail = JSON.parse(JSON.stringify(await repos.calls.findDetail(organizationId, callId)));
    expect(detail.transcript[0].text).toBe('turn 0');
    expect(detail.toolInvocations[0].arguments).toEqual({ orderId: 'A-17', items: [1, 2] });
    expect(detail.latency[0].voiceToVoiceMs).toBe(250.5);
  });

  it('deletes a call’s records with the call', async () => {
    const { callId } = await createInboundCall(repos);
    await records.appendTranscriptTurns(callId, [turn(0), turn(1)]);
    await records.insertToolInvocations(callId, [tool('call_1', 100)]);
    await records.upsertTurnLatencies(callId, [latency(0, { endOfTurnMs: 5 })]);

    await prisma.call.delete({ where: { id: callId } });

    await expect(prisma.transcriptTurn.count({ where: { callId } })).resolves.toBe(0);
    await expect(prisma.toolInvocation.count({ where: { callId } })).resolves.toBe(0);
    await expect(prisma.turnLatency.count({ where: { callId } })).resolves.toBe(0);
  });
});
