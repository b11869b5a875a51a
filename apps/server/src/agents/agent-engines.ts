import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@switchboard/config';
import { EchoAgentEngine, PipelineAgentEngine, RealtimeAgentEngine, type AgentConfig, type AgentEngine } from '@switchboard/conversation';
import { createToolRunner } from '@switchboard/conversation/tools/agent-tool-runner';
import { InferenceService } from '../inference/inference.service';
import { ServerPipelineEngines } from './server-pipeline-engines';
import { ServerRealtimeEngines } from './server-realtime-engines';
import { CallUsageRegistry } from '../usage/call-usage-registry';

/** The agent engines this server can run, by the `engine` name stored on an agent. */
@Injectable()
export class AgentEngines implements OnApplicationShutdown {
  private readonly pipelineEngines: ServerPipelineEngines;
  private readonly engines: Map<string, AgentEngine>;

  constructor(@Inject(APP_CONFIG) config: AppConfig, inference: InferenceService, usage: CallUsageRegistry) {
    this.pipelineEngines = new ServerPipelineEngines(() => inference.runtime(), inference.models, config.inference.modelsDir, usage);
    const realtimeEngines = new ServerRealtimeEngines(usage);
    const tools = (agentConfig: AgentConfig) => createToolRunner(agentConfig.tools);
    this.engines = new Map<string, AgentEngine>([
      ['echo', new EchoAgentEngine()],
      ['pipeline', new PipelineAgentEngine({ engines: this.pipelineEngines, createToolRunner: tools })],
      [
        'realtime',
        new RealtimeAgentEngine({
          resolveEngine: (agentConfig) => realtimeEngines.resolve(agentConfig),
          createToolRunner: tools,
          createVadStream: (callId) => this.pipelineEngines.createVadStream(callId),
        }),
      ],
    ]);
  }

  resolve(engine: string): AgentEngine | undefined {
    return this.engines.get(engine);
  }

  all(): AgentEngine[] {
    return [...this.engines.values()];
  }

  async onApplicationShutdown(): Promise<void> {
    await this.pipelineEngines.close();
  }
}
