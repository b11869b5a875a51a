import type {
  ConversationRecorder,
  ToolInvocationRecord,
  TranscriptTurnRecord,
  TurnLatencyRecord,
} from '@switchboard/conversation';
import { isRetryableDatabaseError, PersistenceError, type ConversationRecordRepository } from '@switchboard/persistence';
import type { PinoLogger } from 'nestjs-pino';
import type { CallEventBuffer } from './call-event-buffer';

export type ConversationRecordStore = Pick<
  ConversationRecordRepository,
  'appendTranscriptTurns' | 'insertToolInvocations' | 'upsertTurnLatencies'
>;

export interface ConversationRecordBufferOptions {
  /** Flush at least this often, so a live call's transcript shows in the API within a second. */
  flushIntervalMs?: number;
  /** ...or as soon as this many records are waiting. */
  batchSize?: number;
  /** After a failed write (database down), wait this long before trying again. */
  retryDelayMs?: number;
  /** Per kind of record: a database outage must not grow a call's buffer without bound. */
  maxPending?: number;
}

const DEFAULTS: Required<ConversationRecordBufferOptions> = {
  flushIntervalMs: 500,
  batchSize: 100,
  retryDelayMs: 2_000,
  maxPending: 2_000,
};

type Kind = 'transcriptTurns' | 'toolInvocations' | 'turnLatencies';

/**
 * The server's ConversationRecorder: the conversation runtime reports records without waiting,
 * and they reach the database in batches. Failed writes keep their records and retry (a
 * retried batch never duplicates: turns are unique per index, latencies are upserts); a record
 * the database refuses for good (bad input) is dropped alone, never with its batch. Waterfalls
 * reported twice for one turn are merged here, later non-null fields winning, and again in the
 * database when the first report was already written.
 */
export class ConversationRecordBuffer implements ConversationRecorder {
  private turns: TranscriptTurnRecord[] = [];
  private tools: ToolInvocationRecord[] = [];
  /** Insertion-ordered, so the oldest waterfall is the first one dropped when over the bound. */
  private latencies = new Map<number, TurnLatencyRecord>();
  private readonly dropped: Record<Kind, number> = { transcriptTurns: 0, toolInvocations: 0, turnLatencies: 0 };
  private readonly options: Required<ConversationRecordBufferOptions>;
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;

  constructor(
    private readonly callId: string,
    private readonly store: ConversationRecordStore,
    private readonly events: Pick<CallEventBuffer, 'add' | 'flush'>,
    private readonly logger: Pick<PinoLogger, 'warn' | 'error'>,
    options: ConversationRecordBufferOptions = {},
  ) {
    this.options = { ...DEFAULTS, ...options };
  }

  transcriptTurn(turn: TranscriptTurnRecord): void {
    // Copies: the runtime may reuse its objects before the flush.
    this.turns.push({ ...turn });
    this.trim('transcriptTurns', this.turns);
    this.scheduleFlush();
  }

  toolInvocation(invocation: ToolInvocationRecord): void {
    this.tools.push({ ...invocation });
    this.trim('toolInvocations', this.tools);
    this.scheduleFlush();
  }

  turnLatency(latency: TurnLatencyRecord): void {
    const earlier = this.latencies.get(latency.turnIndex);
    this.latencies.set(latency.turnIndex, earlier ? mergeLatency(earlier, latency) : { ...latency });
    this.trimLatencies();
    this.scheduleFlush();
  }

  event(type: string, payload: Record<string, unknown> = {}): void {
    this.events.add(type, payload);
  }

  /**
   * Writes everything reported so far, events included, and resolves once that was tried:
   * what failed for a passing reason is still held and retried later. Safe to call
   * concurrently; never rejects.
   */
  async flush(): Promise<void> {
    this.clearTimer();
    while (this.flushing) await this.flushing;
    if (this.pendingCount() > 0) {
      const turns = this.turns;
      const tools = this.tools;
      const latencies = [...this.latencies.values()];
      this.turns = [];
      this.tools = [];
      this.latencies = new Map();
      this.flushing = this.writeAll(turns, tools, latencies).finally(() => {
        this.flushing = undefined;
      });
      await this.flushing;
    }
    this.reportDropped();
    await this.events.flush();
  }

  /** Final flush at the end of a call: no timers afterwards, so what still failed is lost (and said so). */
  async close(): Promise<void> {
    await this.flush();
    this.clearTimer();
    const left = this.pendingCount();
    if (left > 0) this.logger.error({ callId: this.callId, count: left }, 'conversation records not stored by the end of the call; dropped');
  }

  private async writeAll(
    turns: TranscriptTurnRecord[],
    tools: ToolInvocationRecord[],
    latencies: TurnLatencyRecord[],
  ): Promise<void> {
    // One kind failing must not hold back the others.
    await this.write('transcriptTurns', turns, (batch) => this.store.appendTranscriptTurns(this.callId, batch), (batch) => {
      this.turns = this.trim('transcriptTurns', [...batch, ...this.turns]);
    });
    await this.write('toolInvocations', tools, (batch) => this.store.insertToolInvocations(this.callId, batch), (batch) => {
      this.tools = this.trim('toolInvocations', [...batch, ...this.tools]);
    });
    await this.write('turnLatencies', latencies, (batch) => this.store.upsertTurnLatencies(this.callId, batch), (batch) => {
      this.requeueLatencies(batch);
    });
  }

  /**
   * Writes a batch. A passing failure (database unreachable) puts it back for a later try; a
   * missing call drops it; any other failure means some record is refused, so the records are
   * written one at a time and only the refused ones are dropped.
   */
  private async write<T>(kind: Kind, batch: T[], store: (batch: T[]) => Promise<void>, requeue: (batch: T[]) => void): Promise<void> {
    if (batch.length === 0) return;
    try {
      await store(batch);
    } catch (error) {
      if (isRetryableDatabaseError(error)) {
        this.logger.warn({ callId: this.callId, kind, count: batch.length, reason: describe(error) }, 'conversation records not stored yet; will retry');
        requeue(batch);
        this.timer ??= this.startTimer(this.options.retryDelayMs);
        return;
      }
      const callGone = error instanceof PersistenceError && error.code === 'not_found';
      if (callGone || batch.length === 1) {
        // Only the reason is logged: records hold what the caller said, which stays out of logs.
        this.logger.error({ callId: this.callId, kind, count: batch.length, reason: describe(error) }, 'conversation records refused; dropped');
        return;
      }
      for (const record of batch) await this.write(kind, [record], store, requeue);
    }
  }

  private requeueLatencies(batch: TurnLatencyRecord[]): void {
    // Reports that arrived during the failed write are newer: they win over the batch's fields.
    const merged = new Map<number, TurnLatencyRecord>();
    for (const latency of batch) {
      const newer = this.latencies.get(latency.turnIndex);
      merged.set(latency.turnIndex, newer ? mergeLatency(latency, newer) : latency);
    }
    for (const [turnIndex, latency] of this.latencies) if (!merged.has(turnIndex)) merged.set(turnIndex, latency);
    this.latencies = merged;
    this.trimLatencies();
  }

  /** Drops the oldest records beyond the bound, in place, counting them. */
  private trim<T>(kind: Kind, records: T[]): T[] {
    const excess = records.length - this.options.maxPending;
    if (excess > 0) {
      records.splice(0, excess);
      this.dropped[kind] += excess;
    }
    return records;
  }

  private trimLatencies(): void {
    for (const turnIndex of this.latencies.keys()) {
      if (this.latencies.size <= this.options.maxPending) return;
      this.latencies.delete(turnIndex);
      this.dropped.turnLatencies += 1;
    }
  }

  /** Records dropped to keep memory bounded show up in the call's event log. */
  private reportDropped(): void {
    const { transcriptTurns, toolInvocations, turnLatencies } = this.dropped;
    if (transcriptTurns + toolInvocations + turnLatencies === 0) return;
    this.events.add('conversation_records_dropped', { transcriptTurns, toolInvocations, turnLatencies });
    this.dropped.transcriptTurns = 0;
    this.dropped.toolInvocations = 0;
    this.dropped.turnLatencies = 0;
  }

  private pendingCount(): number {
    return this.turns.length + this.tools.length + this.latencies.size;
  }

  private scheduleFlush(): void {
    if (this.pendingCount() >= this.options.batchSize) void this.flush();
    else this.timer ??= this.startTimer(this.options.flushIntervalMs);
  }

  private startTimer(delayMs: number): NodeJS.Timeout {
    const timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, delayMs);
    // A pending flush alone must not keep the process alive; shutdown flushes explicitly.
    timer.unref();
    return timer;
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/** `later`'s non-null fields over `earlier`'s. */
/** One turn's waterfall from two reports of it: later non-null fields win. */
export function mergeLatency(earlier: TurnLatencyRecord, later: TurnLatencyRecord): TurnLatencyRecord {
  const merged = { ...earlier };
  for (const [field, value] of Object.entries(later) as [keyof TurnLatencyRecord, number | null][]) {
    if (value !== null && value !== undefined) merged[field] = value;
  }
  return merged;
}

function describe(error: unknown): string {
  if (error instanceof PersistenceError) return `${error.code}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}
