import type { AgentAudioOutput, AgentCallContext } from '../agent/agent-session';
import type { CallClock } from '../call/call-clock';
import type { AgentConfig } from '@switchboard/agent-config';
import type { ToolRunner } from '../tools/tool-contracts';
import { AssistantReply } from './assistant-reply';
import type { ConversationHistory } from './conversation-history';
import type { PipelineEngines } from './pipeline-engines';

/** What every reply of one pipeline call shares: the call, its config, the way out, its tools and clock. */
export interface ReplyCall {
  context: AgentCallContext;
  config: AgentConfig;
  output: AgentAudioOutput;
  tools: ToolRunner;
  clock: CallClock;
  /** A reply's first audio went to the call (barge-in becomes possible). */
  onPlaybackStarted(): void;
  /** A filler line said while a slow tool runs. */
  onAside(text: string): void;
}

/** Builds the replies of one pipeline call, numbered r1, r2, ... (the id prefixes their marks). */
export class CallReplies {
  private count = 0;

  constructor(private readonly call: ReplyCall) {}

  /** A reply on `history`; `held`: speculative, played only once released. */
  create(engines: PipelineEngines, history: ConversationHistory, held?: boolean): AssistantReply {
    const { context, config } = this.call;
    this.count += 1;
    return new AssistantReply(
      {
        llm: engines.llm,
        tts: engines.tts,
        voice: config.tts.voice,
        tools: this.call.tools,
        output: this.call.output,
        history,
        recorder: context.recorder,
        clock: this.call.clock,
        toolContext: { callId: context.callId, organizationId: context.organizationId, agentId: context.agentId, callerNumber: context.callerNumber },
        temperature: config.llm.temperature,
        maxTokens: config.llm.maxTokens,
        maxReplyMs: config.maxReplyMs,
        onPlaybackStarted: () => this.call.onPlaybackStarted(),
        onAside: (text) => this.call.onAside(text),
      },
      `r${this.count}`,
      { held },
    );
  }
}
