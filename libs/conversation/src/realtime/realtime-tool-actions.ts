import type { SpeechToSpeechSession, SpeechToSpeechToolCallEvent } from '@switchboard/inference';
import type { AgentCallContext } from '../agent/agent-session';
import type { CallPolicy } from '../agent/call-policy';
import type { CallClock } from '../call/call-clock';
import type { TranscriptSource } from '../records/conversation-records';
import type { ToolAction, ToolRunner } from '../tools/tool-contracts';
import { PendingToolAction } from './pending-tool-action';
import { RealtimeToolCalls } from './realtime-tool-calls';
import type { RequestedLines } from './requested-lines';
import type { ResponseLedger } from './response-ledger';

/** What the realtime session lends its tools: the model session, the call policy, and its way of saying a line. */
export interface RealtimeToolHost {
  tools: ToolRunner;
  context: AgentCallContext;
  clock: CallClock;
  policy: CallPolicy;
  responses: ResponseLedger;
  lines: RequestedLines;
  session(): SpeechToSpeechSession | undefined;
  isClosed(): boolean;
  say(text: string, source: TranscriptSource, then?: () => Promise<void>): void;
}

/**
 * The tools a realtime model calls, and what they ask of the call: each runs (with its filler line
 * when slow), its result goes back to the model, and an end_call or transfer it asks for waits
 * until the model has had its turn to say its closing words (or a bound passed), then happens.
 */
export class RealtimeToolActions {
  private readonly pending: PendingToolAction;
  private readonly calls: RealtimeToolCalls;

  constructor(private readonly host: RealtimeToolHost) {
    this.pending = new PendingToolAction((toolName) => {
      host.context.recorder.event('closing_words_timeout', { tool: toolName });
      void this.performPending();
    });
    this.calls = new RealtimeToolCalls({ tools: host.tools, context: host.context, clock: host.clock, onSlow: (filler) => this.onSlowTool(filler) });
  }

  /** An end_call or transfer waits for the model's closing words. */
  get waiting(): boolean {
    return this.pending.waiting;
  }

  async onToolCall(event: SpeechToSpeechToolCallEvent): Promise<void> {
    const { responses, lines } = this.host;
    const toolSeq = responses.seen(event.responseId);
    const outcome = await this.calls.run(event);
    if (this.host.isClosed() || !this.host.session()?.isOpen) return;
    // The model takes one response at a time: a filler line still being generated goes first.
    const filler = lines.pending;
    if (filler?.source === 'tool_filler') await filler.generated;
    const session = this.host.session();
    if (this.host.isClosed() || !session?.isOpen) return;
    // Should the model stay silent after the tool result, the action still happens after a bound.
    this.pending.hold(outcome.action, toolSeq, event.name);
    // The model then answers, or says its closing words, in the response that follows.
    responses.requested();
    session.submitToolResult(event.callId, outcome.content);
  }

  /** Response `seq` finished; true once the model has had its turn after the tool's response. */
  responseDone(seq: number): boolean {
    return this.pending.responseDone(seq);
  }

  /** The waiting action happens now. */
  async performPending(): Promise<void> {
    if (this.host.isClosed()) return;
    const pending = this.pending.take();
    if (!pending) return;
    // Closing words count when the tool's response, or one after it, spoke.
    await this.perform(pending.action, this.host.responses.lastSpokenSeq >= pending.toolSeq);
  }

  /** A voicemail replaces the conversation: a waiting action is dropped. */
  drop(): void {
    this.pending.take();
  }

  close(): void {
    this.pending.close();
    this.calls.abortAll();
  }

  /** A tool is slow: its filler line is said, unless the model is already saying something. */
  private onSlowTool(filler: string): void {
    const { policy, responses, lines } = this.host;
    if (this.host.isClosed() || policy.ending || !this.host.session()?.isOpen) return;
    if (responses.active || lines.pending) {
      this.host.context.recorder.event('tool_filler_skipped', { reason: 'response_active' });
      return;
    }
    this.host.say(filler, 'tool_filler');
  }

  private async perform(action: ToolAction, modelSpoke: boolean): Promise<void> {
    const { policy } = this.host;
    if (action.type === 'end_call') {
      if (modelSpoke) return policy.hangUp('agent_hangup');
      // The model hung up without a word: the configured goodbye is said first.
      policy.markEnding();
      return this.host.say(action.goodbye, 'closing', () => policy.hangUp('agent_hangup'));
    }
    if (action.type !== 'transfer') return;
    if (modelSpoke && !action.warm) return policy.transfer(action.to);
    policy.markEnding();
    // A warm transfer always says its hold message: the caller must know they are being put on hold.
    this.host.say(action.message, 'closing', () => policy.transfer(action.to, action.warm));
  }
}
