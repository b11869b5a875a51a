import type {
  ToolInvocationRecord,
  TranscriptTurnRecord,
  TurnLatencyRecord,
} from '@switchboard/conversation';
import { PersistenceError, type CallEventInput } from '@switchboard/persistence';
import type { PinoLogger } from 'nestjs-pino';
import { CallEventBuffer } from './call-event-buffer';
import { ConversationRecordBuffer, type ConversationRecordStore } from './conversation-record-buffer';

const CALL_ID = '11111111-1111-4111-8111-111111111111';

type Write =
  | { kind: 'turns'; items: TranscriptTurnRecord[] }
  | { kind: 'tools'; items: ToolInvocationRecord[] }
  | { kind: 'latencies'; items: TurnLatencyRecord[] };

/** Stores what it is given; `failNext` makes the next writes throw, `hold` keeps them pending. */
class FakeStore implements ConversationRecordStore {
  readonly writes: Write[] = [];
  readonly attempts: Write[] = [];
  readonly failNext: unknown[] = [];
  /** Rejects a write holding a turn with this text, every time (a record the database refuses). */
  refusedText: string | undefined;
  private held: Array<() => void> | undefined;

  hold(): void {
    this.held = [];
  }

  release(): void {
    const held = this.held ?? [];
    this.held = undefined;
    for (const resume of held) resume();
  }

  appendTranscriptTurns = (_callId: string, items: readonly TranscriptTurnRecord[]) => this.record({ kind: 'turns', items: [...items] });
  insertToolInvocations = (_callId: string, items: readonly ToolInvocationRecord[]) => this.record({ kind: 'tools', items: [...items] });
  upsertTurnLatencies = (_callId: string, items: readonly TurnLatencyRecord[]) => this.record({ kind: 'latencies', items: [...items] });

  private async record(write: Write): Promise<void> {
    this.attempts.push(write);
    if (this.held) await new Promise<void>((resume) => this.held!.push(resume));
    if (this.failNext.length > 0) throw this.failNext.shift();
    if (write.kind === 'turns' && write.items.some((t) => t.text === this.refusedText)) {
      throw new PersistenceError('invalid_input', 'Transcript turn #0 refused');
    }
    this.writes.push(write);
  }

  /** Everything stored of one kind, in write order. */
  stored(kind: 'turns'): TranscriptTurnRecord[];
  stored(kind: 'tools'): ToolInvocationRecord[];
  stored(kind: 'latencies'): TurnLatencyRecord[];
  stored(kind: Write['kind']): unknown[] {
    return this.writes.filter((w) => w.kind === kind).flatMap((w): unknown[] => w.items);
  }
}

function turn(index: number, text = `turn ${index}`): TranscriptTurnRecord {
  return { index, role: 'user', source: 'speech', text, heardText: null, interrupted: false, startMs: index * 100, endMs: index * 100 + 50 };
}

function tool(toolCallId: string): ToolInvocationRecord {
  return { toolCallId, name: 'lookup', arguments: { q: 1 }, result: 'ok', error: null, startedAtMs: 10, latencyMs: 1.5 };
}

function latency(turnIndex: number, fields: Partial<TurnLatencyRecord>): TurnLatencyRecord {
  return {
    turnIndex,
    endOfSpeechMs: null,
    endOfTurnFrameMs: null,
    interruptedAtMs: null,
    endOfTurnMs: null,
    asrFinalMs: null,
    llmFirstTokenMs: null,
    ttsFirstByteMs: null,
    firstFrameSentMs: null,
    firstMarkEchoedMs: null,
    ...fields,
  };
}

const outage = () => new PersistenceError('unavailable', 'database unreachable', true);

function setup(options: ConstructorParameters<typeof ConversationRecordBuffer>[4] = {}) {
  const store = new FakeStore();
  const logged: { level: 'warn' | 'error'; fields: Record<string, unknown>; message: string }[] = [];
  const logger = {
    warn: (fields: Record<string, unknown>, message: string) => logged.push({ level: 'warn', fields, message }),
    error: (fields: Record<string, unknown>, message: string) => logged.push({ level: 'error', fields, message }),
  } as unknown as PinoLogger;
  const storedEvents: CallEventInput[] = [];
  const eventRepository = { appendMany: async (_callId: string, events: readonly CallEventInput[]) => void storedEvents.push(...events) };
  const events = new CallEventBuffer(CALL_ID, eventRepository, logger);
  const buffer = new ConversationRecordBuffer(CALL_ID, store, events, logger, options);
  return { store, logged, storedEvents, events, buffer };
}

describe('ConversationRecordBuffer', () => {
  afterEach(() => jest.useRealTimers());

  it('flush() writes every kind of record in one batch each, and the call events through the event buffer', async () => {
    const { store, storedEvents, buffer } = setup();
    buffer.transcriptTurn(turn(0));
    buffer.transcriptTurn(turn(1));
    buffer.toolInvocation(tool('call_1'));
    buffer.turnLatency(latency(1, { endOfSpeechMs: 90 }));
    buffer.event('barge_in', { turnIndex: 1 });

    await buffer.close();

    expect(store.writes.map((w) => [w.kind, w.items.length])).toEqual([
      ['turns', 2],
      ['tools', 1],
      ['latencies', 1],
    ]);
    expect(store.stored('turns').map((t) => t.index)).toEqual([0, 1]);
    expect(storedEvents).toEqual([{ type: 'barge_in', at: expect.any(Date), payload: { turnIndex: 1 } }]);
  });

  it('writes on its own after the flush interval, or at once when a batch is full', async () => {
    jest.useFakeTimers();
    const { store, buffer } = setup({ flushIntervalMs: 500, batchSize: 3 });
    buffer.transcriptTurn(turn(0));
    await jest.advanceTimersByTimeAsync(499);
    expect(store.attempts).toHaveLength(0);
    await jest.advanceTimersByTimeAsync(1);
    expect(store.stored('turns').map((t) => t.index)).toEqual([0]);

    buffer.transcriptTurn(turn(1));
    buffer.toolInvocation(tool('a'));
    buffer.turnLatency(latency(1, { endOfTurnMs: 5 }));
    // The third record filled the batch: written without any time passing.
    await jest.advanceTimersByTimeAsync(0);
    expect(store.writes.map((w) => w.kind)).toEqual(['turns', 'turns', 'tools', 'latencies']);
    await buffer.close();
    expect(jest.getTimerCount()).toBe(0);
  });

  it('keeps records when the database is down and stores them once it is back, without duplicates', async () => {
    jest.useFakeTimers();
    const { store, logged, buffer } = setup({ retryDelayMs: 2_000 });
    store.failNext.push(outage(), Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }));
    buffer.transcriptTurn(turn(0));
    buffer.toolInvocation(tool('call_1'));

    await buffer.flush();
    expect(store.writes).toHaveLength(0);
    expect(logged.filter((l) => l.level === 'warn')).toHaveLength(2);
    expect(logged[0]?.fields).toMatchObject({ callId: CALL_ID, kind: 'transcriptTurns', count: 1 });

    // A turn reported during the outage goes after the held one.
    buffer.transcriptTurn(turn(1));
    await jest.advanceTimersByTimeAsync(2_000);
    expect(store.stored('turns').map((t) => t.index)).toEqual([0, 1]);
    expect(store.stored('tools').map((t) => t.toolCallId)).toEqual(['call_1']);

    await buffer.close();
    expect(store.stored('turns')).toHaveLength(2);
    expect(logged.filter((l) => l.level === 'error')).toHaveLength(0);
  });

  it('drops only the record the database refuses, writing the rest of its batch one by one', async () => {
    const { store, logged, buffer } = setup();
    store.refusedText = 'bad';
    buffer.transcriptTurn(turn(0));
    buffer.transcriptTurn(turn(1, 'bad'));
    buffer.transcriptTurn(turn(2));

    await buffer.close();

    expect(store.stored('turns').map((t) => t.index)).toEqual([0, 2]);
    const errors = logged.filter((l) => l.level === 'error');
    expect(errors).toEqual([
      { level: 'error', fields: { callId: CALL_ID, kind: 'transcriptTurns', count: 1, reason: 'invalid_input: Transcript turn #0 refused' }, message: expect.any(String) },
    ]);
    // The caller's words stay out of the log.
    expect(JSON.stringify(logged)).not.toContain('bad');
  });

  it('drops a batch for a call that no longer exists after one try', async () => {
    const { store, logged, buffer } = setup();
    store.failNext.push(new PersistenceError('not_found', `Call ${CALL_ID} does not exist`));
    buffer.transcriptTurn(turn(0));
    buffer.transcriptTurn(turn(1));
    await buffer.close();
    expect(store.attempts).toHaveLength(1);
    expect(logged).toEqual([expect.objectContaining({ level: 'error', fields: expect.objectContaining({ count: 2 }) })]);
  });

  it('merges waterfalls for one turn: later non-null fields win, also over a batch that failed meanwhile', async () => {
    const { store, buffer } = setup();
    buffer.turnLatency(latency(4, { endOfSpeechMs: 100, firstFrameSentMs: 900 }));
    buffer.turnLatency(latency(4, { firstFrameSentMs: 950, firstMarkEchoedMs: null }));
    buffer.turnLatency(latency(2, { endOfTurnMs: 10 }));

    store.hold();
    store.failNext.push(outage());
    const failing = buffer.flush();
    // Reported while the failing write is in flight: newer than what is being written.
    buffer.turnLatency(latency(4, { firstMarkEchoedMs: 1_000, endOfSpeechMs: 120 }));
    store.release();
    await failing;
    expect(store.writes).toHaveLength(0);

    await buffer.close();
    expect(store.writes).toHaveLength(1);
    expect(store.stored('latencies')).toEqual([
      latency(4, { endOfSpeechMs: 120, firstFrameSentMs: 950, firstMarkEchoedMs: 1_000 }),
      latency(2, { endOfTurnMs: 10 }),
    ]);
  });

  it('flush() resolves only once what was reported before it is stored, also when called concurrently', async () => {
    const { store, buffer } = setup();
    buffer.transcriptTurn(turn(0));
    store.hold();
    let firstDone = false;
    const first = buffer.flush().then(() => (firstDone = true));
    buffer.transcriptTurn(turn(1));
    let secondDone = false;
    const second = buffer.flush().then(() => (secondDone = true));

    await new Promise((resolve) => setImmediate(resolve));
    expect(store.attempts).toHaveLength(1);
    expect(firstDone).toBe(false);
    expect(secondDone).toBe(false);

    store.release();
    await first;
    // The second flush writes the turn reported after the first one started.
    await second;
    expect(store.stored('turns').map((t) => t.index)).toEqual([0, 1]);
  });

  it('holds at most maxPending records of a kind through an outage, and says in the call log how many it dropped', async () => {
    const { store, storedEvents, buffer } = setup({ maxPending: 3, batchSize: 100 });
    store.failNext.push(outage(), outage());
    for (let i = 0; i < 5; i++) buffer.transcriptTurn(turn(i));
    for (let i = 0; i < 4; i++) buffer.turnLatency(latency(i, { endOfTurnMs: i }));
    await buffer.flush(); // turns + latencies fail: held
    buffer.toolInvocation(tool('t'));

    await buffer.close();

    expect(store.stored('turns').map((t) => t.index)).toEqual([2, 3, 4]);
    expect(store.stored('latencies').map((l) => l.turnIndex)).toEqual([1, 2, 3]);
    expect(storedEvents.filter((e) => e.type === 'conversation_records_dropped').map((e) => e.payload)).toEqual([
      { transcriptTurns: 2, toolInvocations: 0, turnLatencies: 1 },
    ]);
  });
});
