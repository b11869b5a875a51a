import type { AgentAudioOutput, AgentCallContext, AgentDescriptor, AgentEngine, AgentSession } from '../agent/agent-session';
import { parseAgentConfig } from '@switchboard/agent-config';
import type { AgentConfig } from '@switchboard/agent-config';
import type { ToolRunner } from '../tools/tool-contracts';
import type { PipelineEngineResolver } from './pipeline-engines';
import { PipelineAgentSession } from './pipeline-agent-session';

/** Caller audio is taken at 8 kHz: Silero runs natively there, so the hot path resamples nothing. */
export const PIPELINE_INPUT_SAMPLE_RATE = 8000;

export interface PipelineAgentEngineOptions {
  engines: PipelineEngineResolver;
  /** Builds the call's tools from its config (webhook tools, end_call, transfer_call). */
  createToolRunner(config: AgentConfig, context: AgentCallContext): ToolRunner;
}

/** The `pipeline` agent: VAD/turn detection, ASR, LLM with tools and TTS, chosen per agent config. */
export class PipelineAgentEngine implements AgentEngine {
  readonly name = 'pipeline';
  /** Flite (the default voice) speaks at 16 kHz. */
  readonly audio: AgentDescriptor = { inputSampleRate: PIPELINE_INPUT_SAMPLE_RATE, outputSampleRate: 16_000 };

  constructor(private readonly options: PipelineAgentEngineOptions) {}

  describeAudio(context: AgentCallContext): AgentDescriptor {
    return { inputSampleRate: PIPELINE_INPUT_SAMPLE_RATE, outputSampleRate: this.options.engines.ttsSampleRate(parseAgentConfig(context.config)) };
  }

  createSession(context: AgentCallContext, output: AgentAudioOutput): AgentSession {
    const config = parseAgentConfig(context.config);
    const tools = this.options.createToolRunner(config, context);
    return new PipelineAgentSession(context, config, output, tools, this.options.engines.resolve(config, context));
  }
}
