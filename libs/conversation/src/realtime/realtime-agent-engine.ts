import type { SpeechToSpeechEngine, VadStream } from '@switchboard/inference';
import type { AgentAudioOutput, AgentCallContext, AgentDescriptor, AgentEngine, AgentSession } from '../agent/agent-session';
import type { AgentConfig } from '@switchboard/agent-config';
import { parseAgentConfig } from '@switchboard/agent-config';
import type { EngineCallContext } from '../pipeline/pipeline-engines';
import type { ToolRunner } from '../tools/tool-contracts';
import { RealtimeAgentSession } from './realtime-agent-session';

export interface RealtimeAgentEngineOptions {
  /** The speech-to-speech engine for an agent config and call (cached per endpoint and key by the server). */
  resolveEngine(config: AgentConfig, call: EngineCallContext): Promise<SpeechToSpeechEngine>;
  createToolRunner(config: AgentConfig, context: AgentCallContext): ToolRunner;
  /**
   * A VAD stream (8 kHz) for one call's caller audio: the platform judges barge-in with it, as for
   * the pipeline agent. Should it fail, the call still runs on the model's own speech events.
   */
  createVadStream(callId: string): Promise<VadStream>;
}

/** The `realtime` agent: a native speech-to-speech model, with the platform's barge-in, tools and records. */
export class RealtimeAgentEngine implements AgentEngine {
  readonly name = 'realtime';
  /** Telephone audio both ways: the call's mu-law passes to and from the model untouched (no decode, encode or resampling). */
  readonly audio: AgentDescriptor = { inputSampleRate: 8000, outputSampleRate: 8000, inputEncoding: 'mulaw', outputEncoding: 'mulaw' };

  constructor(private readonly options: RealtimeAgentEngineOptions) {}

  createSession(context: AgentCallContext, output: AgentAudioOutput): AgentSession {
    const config = parseAgentConfig(context.config);
    return new RealtimeAgentSession(context, config, output, {
      tools: this.options.createToolRunner(config, context),
      engine: this.options.resolveEngine(config, context),
      createVad: () => this.options.createVadStream(context.callId),
    });
  }
}
