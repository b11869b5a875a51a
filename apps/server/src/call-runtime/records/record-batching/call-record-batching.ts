import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import {
  CALL_EVENT_MAX_BATCH,
  CallEventRepository,
  ConversationRecordRepository,
  type CallEventInput,
  type ToolInvocationInput,
  type TranscriptTurnInput,
  type TurnLatencyInput,
} from '@switchboard/persistence';
import type { ConversationRecordStore } from '../conversation-record-buffer';
import { GroupCommit } from './group-commit';

/** How long the first call's flush waits for others to join it: calls' records still show within a second. */
const GROUP_WINDOW_MS = 150;
/** Rows per statement at most (the repositories' own bounds are per call). */
const GROUP_MAX_ROWS = 2_000;

/**
 * The stores every live call's CallEventBuffer and ConversationRecordBuffer write through: the
 * same methods as the repositories, but what all this process's calls flush within a short window
 * becomes one statement (see GroupCommit). Tool invocations are rare and go straight through.
 */
@Injectable()
export class CallRecordBatching implements OnApplicationShutdown {
  private readonly events: GroupCommit<CallEventInput>;
  private readonly turns: GroupCommit<TranscriptTurnInput>;
  private readonly latencies: GroupCommit<TurnLatencyInput>;

  readonly callEvents: Pick<CallEventRepository, 'appendMany'>;
  readonly conversationRecords: ConversationRecordStore;

  constructor(callEvents: CallEventRepository, records: ConversationRecordRepository) {
    const options = { windowMs: GROUP_WINDOW_MS, maxItems: Math.min(GROUP_MAX_ROWS, CALL_EVENT_MAX_BATCH) };
    this.events = new GroupCommit((group) => callEvents.appendForCalls(group.map(({ key, items }) => ({ callId: key, events: items }))), options);
    this.turns = new GroupCommit((group) => records.appendTranscriptTurnsForCalls(group.map(({ key, items }) => ({ callId: key, turns: items }))), options);
    this.latencies = new GroupCommit((group) => records.upsertTurnLatenciesForCalls(group.map(({ key, items }) => ({ callId: key, items }))), options);
    this.callEvents = { appendMany: (callId, events) => this.events.submit(callId, events) };
    this.conversationRecords = {
      appendTranscriptTurns: (callId, turns) => this.turns.submit(callId, turns),
      upsertTurnLatencies: (callId, items) => this.latencies.submit(callId, items),
      insertToolInvocations: (callId: string, items: readonly ToolInvocationInput[]) => records.insertToolInvocations(callId, items),
    };
  }

  /** Whatever a call flushed while the process stops is written before the database closes. */
  async onApplicationShutdown(): Promise<void> {
    await Promise.all([this.events.drain(), this.turns.drain(), this.latencies.drain()]);
  }
}
