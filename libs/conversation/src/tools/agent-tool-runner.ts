import type { ToolDefinition } from '@switchboard/inference';
import type { ToolConfig, WebhookToolConfig } from '@switchboard/agent-config';
import { endCallTool, transferCallTool } from './built-in-tools';
import type { ArgumentValidator } from './tool-arguments';
import type { ToolCallContext, ToolInvocation, ToolOutcome, ToolRunner } from './tool-contracts';
import { excerpt, failed } from './tool-outcome';
import { validatorOrThrow, type ToolSchemaCache } from './tool-schema';
import { WebhookTool, type WebhookToolOptions } from './webhook-tool';

/** Said while a webhook tool without its own fillerMessage is running. */
export const DEFAULT_FILLER_MESSAGE = 'One moment while I check that.';

export interface ToolRunnerOptions extends Omit<WebhookToolOptions, 'validator'> {
  /**
   * Reuses compiled `parameters` schemas: a runner is built at every call start, and compiling a
   * schema is CPU work that belongs once per agent config version. Each webhook tool's entry is
   * `${configKey}:${toolName}`, so `configKey` must change whenever the tools can (e.g.
   * `${agentId}:${configVersion}`). Without it every webhook tool compiles its schema afresh.
   */
  schemaCache?: { cache: ToolSchemaCache; configKey: string };
}

interface RunnableTool {
  definition: ToolDefinition;
  /** Only slow (network) tools have one. */
  filler: string | undefined;
  run(invocation: ToolInvocation, context: ToolCallContext): Promise<ToolOutcome> | ToolOutcome;
}

/** The webhook tool's validator from the cache; undefined without one (WebhookTool then compiles it). */
function cachedValidator(config: WebhookToolConfig, schemaCache: ToolRunnerOptions['schemaCache']): ArgumentValidator | undefined {
  if (schemaCache === undefined) return undefined;
  return validatorOrThrow(config.name, schemaCache.cache.compile(`${schemaCache.configKey}:${config.name}`, config.parameters));
}

function runnable(config: ToolConfig, options: ToolRunnerOptions): RunnableTool {
  switch (config.type) {
    case 'end_call':
      return { ...endCallTool(config), filler: undefined };
    case 'transfer_call':
      return { ...transferCallTool(config), filler: undefined };
    case 'webhook': {
      const { schemaCache, ...webhookOptions } = options;
      const tool = new WebhookTool(config, { ...webhookOptions, validator: cachedValidator(config, schemaCache) });
      return {
        definition: tool.definition,
        filler: tool.fillerMessage ?? DEFAULT_FILLER_MESSAGE,
        run: (invocation, context) => tool.run(invocation, context),
      };
    }
  }
}

class AgentToolRunner implements ToolRunner {
  readonly definitions: ToolDefinition[];

  constructor(private readonly tools: ReadonlyMap<string, RunnableTool>) {
    this.definitions = [...tools.values()].map((tool) => tool.definition);
  }

  fillerFor(name: string): string | undefined {
    return this.tools.get(name)?.filler;
  }

  async run(call: ToolInvocation, context: ToolCallContext): Promise<ToolOutcome> {
    const tool = this.tools.get(call.name);
    if (tool === undefined) {
      const available = [...this.tools.keys()].join(', ') || 'none';
      return failed(`unknown tool "${excerpt(call.name, 64)}"; available tools: ${available}`);
    }
    try {
      return await tool.run(call, context);
    } catch (error) {
      // Tools report their own failures; this only keeps the "never rejects" promise for a bug.
      return failed(`tool "${call.name}" failed unexpectedly: ${(error as Error).message}`);
    }
  }
}

/**
 * The tools of one agent configuration. Throws at construction (not mid-call) when two tools share
 * a name or a webhook tool's parameters schema does not compile.
 */
export function createToolRunner(tools: readonly ToolConfig[], options: ToolRunnerOptions = {}): ToolRunner {
  const byName = new Map<string, RunnableTool>();
  for (const config of tools) {
    const tool = runnable(config, options);
    const name = tool.definition.name;
    if (byName.has(name)) {
      throw new Error(`two tools are named "${name}": tool names must be unique within an agent (end_call and transfer_call at most once each)`);
    }
    byName.set(name, tool);
  }
  return new AgentToolRunner(byName);
}
