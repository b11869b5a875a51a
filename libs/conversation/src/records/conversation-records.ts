/**
 * What a conversation leaves behind, as the runtime reports it. Offsets are milliseconds since the
 * call started (calls.started_at, the same origin as call events), so a timeline of transcript,
 * tools and latency can be drawn without date math.
 */

export type TranscriptRole = 'user' | 'assistant';

/**
 * How a turn came about: spoken, typed on the keypad, or said by the agent on its own (`voicemail`:
 * the message left on an answering machine; `transfer_return`: the agent taking the caller back
 * after a warm transfer nobody answered).
 */
export type TranscriptSource =
  | 'speech'
  | 'dtmf'
  | 'first_message'
  | 'idle_prompt'
  | 'tool_filler'
  | 'apology'
  | 'closing'
  | 'voicemail'
  | 'transfer_return';

/** The first message, or the line that takes a call back after a failed warm transfer: the call's opening line. */
export function isOpeningLine(source: TranscriptSource): boolean {
  return source === 'first_message' || source === 'transfer_return';
}

export interface TranscriptTurnRecord {
  /** 0, 1, 2 ... in the order the turns ended. */
  index: number;
  role: TranscriptRole;
  source: TranscriptSource;
  /** What was said (assistant: everything generated for the turn, heard or not). */
  text: string;
  /** Assistant turns cut short by the caller: the part the caller actually heard (from mark echoes). */
  heardText: string | null;
  interrupted: boolean;
  startMs: number;
  endMs: number;
}

export interface ToolInvocationRecord {
  /** The model's id for the call (tool_call_id), so the history can be traced. */
  toolCallId: string;
  name: string;
  /** Parsed arguments when they were valid JSON, else the raw text the model produced. */
  arguments: unknown;
  /** What was fed back to the model on success. */
  result: unknown;
  /** Why the tool failed (validation, timeout, HTTP status, unknown tool); null on success. */
  error: string | null;
  startedAtMs: number;
  latencyMs: number;
}

/**
 * One reply's latency waterfall. Each field is an offset in the call (ms), null when the step did not
 * happen (no ASR for DTMF input, no LLM for a scripted line, no mark before hang-up ...).
 */
export interface TurnLatencyRecord {
  /** The assistant turn this waterfall led to. */
  turnIndex: number;
  /** When the caller stopped speaking (arrival of the frame where the silence that ended the turn began). */
  endOfSpeechMs: number | null;
  /**
   * Arrival of the frame that completed the end-of-turn silence: the earliest the turn could be
   * decided. endOfTurnMs minus this is queueing inside the server (VAD batches, a busy event loop).
   */
  endOfTurnFrameMs: number | null;
  /** When the runtime acted on the end of the turn (decided it was over). */
  endOfTurnMs: number | null;
  asrFinalMs: number | null;
  llmFirstTokenMs: number | null;
  ttsFirstByteMs: number | null;
  firstFrameSentMs: number | null;
  firstMarkEchoedMs: number | null;
  /** When the reply was cut (barge-in, superseded by the caller's next turn); null when it played out. */
  interruptedAtMs: number | null;
}

/**
 * Where a conversation's records go. Calls return at once (the media path never waits on the
 * database); `flush()` resolves once everything reported so far is stored. Implemented by the
 * server on top of the repositories; tests use an in-memory one.
 */
export interface ConversationRecorder {
  transcriptTurn(turn: TranscriptTurnRecord): void;
  toolInvocation(invocation: ToolInvocationRecord): void;
  turnLatency(latency: TurnLatencyRecord): void;
  /** A call event (call_events): errors, barge-ins, transfers, ... */
  event(type: string, payload?: Record<string, unknown>): void;
  flush(): Promise<void>;
}

/** Keeps records in memory, for tests and benchmarks. */
export class InMemoryConversationRecorder implements ConversationRecorder {
  readonly turns: TranscriptTurnRecord[] = [];
  readonly toolInvocations: ToolInvocationRecord[] = [];
  readonly latencies: TurnLatencyRecord[] = [];
  readonly events: { type: string; payload: Record<string, unknown> }[] = [];

  transcriptTurn(turn: TranscriptTurnRecord): void {
    this.turns.push(turn);
  }

  toolInvocation(invocation: ToolInvocationRecord): void {
    this.toolInvocations.push(invocation);
  }

  turnLatency(latency: TurnLatencyRecord): void {
    this.latencies.push(latency);
  }

  event(type: string, payload: Record<string, unknown> = {}): void {
    this.events.push({ type, payload });
  }

  async flush(): Promise<void> {}
}
