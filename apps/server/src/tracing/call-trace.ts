import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { isOpeningLine, type TranscriptSource } from '@switchboard/conversation';
import { ATTR, SPAN } from './span-attributes';

/** What a call span says about its call: identifiers only (no numbers, no config). */
export interface TracedCall {
  callId: string;
  organizationId: string;
  agentId: string;
  agentConfigVersion: number;
  /** The agent engine: pipeline, realtime, echo. */
  engine: string;
  direction: string | undefined;
  /** The stream takes the call back after a warm transfer nobody answered. */
  resumed: boolean;
  /** calls.started_at: the origin of the offsets the conversation records carry. */
  callStartedAt: Date;
}

/** How a turn ended: answered (played out), cut, replaced by the caller's next turn, ... */
export type TurnOutcome = 'replied' | 'interrupted' | 'superseded' | 'no_transcript' | 'call_ended';

interface Turn {
  span: Span;
  context: Context;
  /** Started by the end of the caller's speech (pipeline): a reply that began playing before it answers an earlier turn. */
  notBeforeMs: number | undefined;
  userRecorded: boolean;
  /** The transcript index of the assistant turn that answered it. */
  replyIndex: number | undefined;
  llmRequests: number;
  failed: boolean;
  /** Set once settled; the span ends on the next tick, so what the runtime records right after (latency, cut) lands on it. */
  endTime: Date | undefined;
  outcome: TurnOutcome | undefined;
}

/** End reasons that mean the platform failed the call (the others are how calls end). */
const FAILED_CALL_REASONS: ReadonlySet<string> = new Set(['agent_error', 'protocol_error']);

/**
 * One call's spans: the call span (stream start to end), a child span per conversational turn
 * (the end of the caller's speech to the end of the reply), and the engine requests' spans under
 * the turn they served (under the call when no turn is open: a greeting, an idle prompt). Turns are
 * driven by the conversation records (TracingRecorder), engine spans by the call's engine observer;
 * both name their parent explicitly, so no async context is involved. Never throws into a call.
 */
export class CallTrace {
  private readonly span: Span;
  private readonly context: Context;
  private readonly startedAt = Date.now();
  private turn: Turn | undefined;
  /** Call-clock offset where the caller's speech ended, until the turn it starts is opened. */
  private pendingTurnMs: number | undefined;
  private turns = 0;
  private ended = false;

  constructor(
    private readonly tracer: Tracer,
    private readonly call: TracedCall,
  ) {
    this.span = tracer.startSpan(
      SPAN.call,
      {
        kind: SpanKind.SERVER,
        attributes: {
          [ATTR.callId]: call.callId,
          [ATTR.organizationId]: call.organizationId,
          [ATTR.agentId]: call.agentId,
          [ATTR.agentConfigVersion]: call.agentConfigVersion,
          [ATTR.agentEngine]: call.engine,
          [ATTR.resumed]: call.resumed,
          ...(call.direction !== undefined && { [ATTR.direction]: call.direction }),
        },
      },
      ROOT_CONTEXT,
    );
    this.context = trace.setSpan(ROOT_CONTEXT, this.span);
  }

  get callId(): string {
    return this.call.callId;
  }

  // ---- turns (from the conversation records) ----------------------------------------------

  /** The caller stopped speaking (pipeline): the turn opens when its transcript is asked for. */
  speechEnded(atMs: number): void {
    this.pendingTurnMs = atMs;
  }

  /** That speech was a backchannel over the agent, not a turn. */
  notATurn(): void {
    this.pendingTurnMs = undefined;
  }

  /** A user transcript turn: keys open a turn; speech opens one unless its recognition already did. */
  userTurn(source: string, startMs: number, endMs: number): void {
    if (source === 'dtmf') return this.openTurn('dtmf', startMs, undefined);
    if (this.pendingTurnMs !== undefined) return this.openTurn('speech', this.pendingTurnMs, this.pendingTurnMs);
    const turn = this.liveTurn();
    if (turn && !turn.userRecorded) turn.userRecorded = true;
    // The realtime agent: the transcript comes when the model has it, so the turn starts there.
    else this.openTurn('speech', endMs, undefined);
  }

  /** An assistant transcript turn: the current turn's reply was played out, or cut. */
  assistantTurn(index: number, source: TranscriptSource, startMs: number, interrupted: boolean): void {
    const turn = this.liveTurn();
    // Filler lines are said while the reply's tool runs: part of the turn, not its end. Nor is the
    // opening line said once a caller who spoke first stops: the turn's answer follows it.
    if (!turn || source === 'tool_filler' || isOpeningLine(source) || (turn.notBeforeMs !== undefined && startMs < turn.notBeforeMs)) return;
    turn.replyIndex = index;
    turn.span.setAttribute(ATTR.interrupted, interrupted);
    this.settle(turn, interrupted ? 'interrupted' : 'replied');
  }

  /** A reply's waterfall: the time the caller waited for its first audio. */
  latency(replyIndex: number, endOfSpeechMs: number | null, firstMarkEchoedMs: number | null, interruptedAtMs: number | null): void {
    const turn = this.turn;
    if (!turn || turn.replyIndex !== replyIndex) return;
    if (endOfSpeechMs !== null && firstMarkEchoedMs !== null) turn.span.setAttribute(ATTR.replyLatencyMs, Math.round(firstMarkEchoedMs - endOfSpeechMs));
    if (interruptedAtMs !== null) turn.span.setAttribute(ATTR.interrupted, true);
  }

  /** The runtime says why the reply it recorded as `replyIndex` was cut (barge_in, superseded, llm_error, ...). */
  replyCut(replyIndex: number, why: string): void {
    const turn = this.turn;
    if (!turn || turn.replyIndex !== replyIndex) return;
    turn.span.setAttributes({ [ATTR.cutReason]: why, [ATTR.interrupted]: true, [ATTR.bargeIn]: why === 'barge_in' });
  }

  /** The caller talked over the reply and it was stopped. */
  bargeIn(): void {
    const turn = this.turn;
    if (!turn) return;
    turn.span.setAttributes({ [ATTR.bargeIn]: true, [ATTR.interrupted]: true });
    this.settle(turn, 'interrupted');
  }

  /** An engine failed for this turn (the engine's own span says how); the caller hears an apology. */
  turnFailed(stage: string): void {
    const turn = this.liveTurn();
    if (!turn) return;
    turn.failed = true;
    turn.span.setStatus({ code: SpanStatusCode.ERROR, message: `${stage} failed` });
  }

  /** The recogniser heard nothing: the turn ends without a reply. */
  noTranscript(): void {
    const turn = this.liveTurn();
    if (turn) this.settle(turn, 'no_transcript');
  }

  // ---- engine requests (from the call's engine observer) ------------------------------------

  /**
   * A span for one engine request, under the open turn (a transcription request opens the turn
   * its caller's speech started). `endTime`-less: the caller ends it.
   */
  startEngineSpan(name: string, step: string, attributes: Attributes, startTime?: Date): Span {
    if (step === 'stt' && this.pendingTurnMs !== undefined) this.openTurn('speech', this.pendingTurnMs, this.pendingTurnMs);
    const turn = this.liveTurn();
    const own: Attributes = { ...attributes };
    if (step === 'llm' && turn) own[ATTR.llmRound] = turn.llmRequests++;
    return this.tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes: own, ...(startTime && { startTime }) }, turn?.context ?? this.context);
  }

  // ---- the end ----------------------------------------------------------------------------

  /** The call's stream ended for `reason` (the call's end reason). Idempotent. */
  end(reason: string): void {
    if (this.ended) return;
    this.ended = true;
    this.pendingTurnMs = undefined;
    if (this.turn) this.finishTurn(this.turn, 'call_ended');
    this.span.setAttributes({ [ATTR.endReason]: reason, [ATTR.callTurns]: this.turns });
    if (FAILED_CALL_REASONS.has(reason)) this.span.setStatus({ code: SpanStatusCode.ERROR, message: reason });
    this.span.end();
  }

  private openTurn(input: 'speech' | 'dtmf', atMs: number, notBeforeMs: number | undefined): void {
    if (this.ended) return;
    this.pendingTurnMs = undefined;
    if (this.turn) this.finishTurn(this.turn, 'superseded');
    // The end of speech lies in the past (the runtime decides a turn ended after some silence);
    // it never lies before the stream's start or after now.
    const startTime = new Date(Math.min(Date.now(), Math.max(this.startedAt, this.call.callStartedAt.getTime() + atMs)));
    const span = this.tracer.startSpan(SPAN.turn, { attributes: { [ATTR.turnIndex]: this.turns, [ATTR.turnInput]: input }, startTime }, this.context);
    this.turns += 1;
    this.turn = {
      span,
      context: trace.setSpan(ROOT_CONTEXT, span),
      notBeforeMs,
      userRecorded: input === 'dtmf',
      replyIndex: undefined,
      llmRequests: 0,
      failed: false,
      endTime: undefined,
      outcome: undefined,
    };
  }

  /** The open turn that has not been settled yet. */
  private liveTurn(): Turn | undefined {
    return this.turn?.endTime === undefined ? this.turn : undefined;
  }

  private settle(turn: Turn, outcome: TurnOutcome): void {
    if (turn.endTime !== undefined) return;
    turn.endTime = new Date();
    turn.outcome = outcome;
    setImmediate(() => this.finishTurn(turn, outcome));
  }

  private finishTurn(turn: Turn, outcome: TurnOutcome): void {
    if (this.turn !== turn) return;
    this.turn = undefined;
    turn.span.setAttribute(ATTR.turnOutcome, turn.outcome ?? outcome);
    turn.span.end(turn.endTime);
  }
}
