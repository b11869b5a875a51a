import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@switchboard/config';
import { type AgentCallContext, type AgentEngine, createToolRunner, EchoAgentEngine, PipelineAgentEngine, RealtimeAgentEngine, type ToolRunner, ToolSchemaCache } from '@switchboard/conversation';
import { type AgentConfig } from '@switchboard/agent-config';
import { InferenceService } from '../inference/inference.service';
import { TenantOutbound } from '../outbound/outbound-guard.provider';
import { SecretsService } from '../secrets/secrets.service';
import { EngineCredentials } from './engine-credentials';
import { ServerPipelineEngines } from './server-pipeline-engines';
import type { LlmEngine } from '@switchboard/inference';
import { ServerRealtimeEngines } from './server-realtime-engines';
import { CallUsageRegistry } from '../billing/usage-meters/call-usage-registry';
import { EngineErrorMetrics } from '../metrics/engine-error-metrics';
import { CallTracing } from '../tracing/call-tracing';
import { EngineObservers, type EngineObserver } from '../tracing/engine-observer';
import { observeTools } from '../tracing/observed-tools';
import { traceAgentEngine } from '../tracing/traced-agent-engine';

/** The agent engines this server can run, by the `engine` name stored on an agent. */
@Injectable()
export class AgentEngines implements OnApplicationShutdown {
  private readonly pipelineEngines: ServerPipelineEngines;
  private readonly engines: Map<string, AgentEngine>;
  /** Tool schemas compiled once per agent config version, not at every call start. */
  private readonly toolSchemas = new ToolSchemaCache();
  /** Every engine and tool request: failures counted (GET /metrics), spans for traced calls. */
  private readonly observer: EngineObserver;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    inference: InferenceService,
    usage: CallUsageRegistry,
    credentials: EngineCredentials,
    private readonly secrets: SecretsService,
    private readonly outbound: TenantOutbound,
    engineErrors: EngineErrorMetrics,
    tracing: CallTracing,
  ) {
    this.observer = new EngineObservers(engineErrors, tracing);
    this.pipelineEngines = new ServerPipelineEngines(() => inference.runtime(), inference.models, config.inference.modelsDir, usage, credentials, outbound, this.observer);
    const realtimeEngines = new ServerRealtimeEngines(usage, credentials, outbound.guard, this.observer);
    const tools = (agentConfig: AgentConfig, context: AgentCallContext) => this.toolRunner(agentConfig, context);
    this.engines = new Map<string, AgentEngine>([
      ['echo', new EchoAgentEngine()],
      ['pipeline', new PipelineAgentEngine({ engines: this.pipelineEngines, createToolRunner: tools })],
      [
        'realtime',
        new RealtimeAgentEngine({
          resolveEngine: (agentConfig, call) => realtimeEngines.resolve(agentConfig, call),
          createToolRunner: tools,
          createVadStream: (callId) => this.pipelineEngines.createVadStream(callId),
        }),
      ],
    ]);
    // Traced calls only: without OTEL_* set, the engines are used as they are.
    if (tracing.enabled) for (const [name, engine] of this.engines) this.engines.set(name, traceAgentEngine(engine, tracing));
  }

  resolve(engine: string): AgentEngine | undefined {
    return this.engines.get(engine);
  }

  all(): AgentEngine[] {
    return [...this.engines.values()];
  }

  /** The LLM for a post-call analysis with these settings, for this organization (its keys, the outbound guard). */
  analysisLlm(llm: AgentConfig['llm'], organizationId: string): Promise<LlmEngine> {
    return this.pipelineEngines.analysisLlm(llm, organizationId);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.pipelineEngines.close();
  }

  /**
   * The call's tools: signed with its organization's vault secrets, sent through the outbound guard,
   * with `parameters` compiled once per config version (versions never change).
   */
  private toolRunner(agentConfig: AgentConfig, context: AgentCallContext): ToolRunner {
    const runner = createToolRunner(agentConfig.tools, {
      resolveSigningSecret: async (name) => (await this.secrets.resolve(context.organizationId, name))?.value,
      fetch: this.outbound.fetch,
      schemaCache: { cache: this.toolSchemas, configKey: `${context.agentId}:${context.agentConfigVersion}` },
    });
    return observeTools(runner, agentConfig.tools, this.observer);
  }
}
