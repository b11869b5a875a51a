import type { ToolRunner } from '@switchboard/conversation';
import type { ToolConfig } from '@switchboard/agent-config';
import type { EngineFailure, EngineObserver, EngineTarget } from './engine-observer';
import { ATTR, SPAN } from './span-attributes';

const WEBHOOK_TARGET: EngineTarget = { step: 'tool', provider: 'webhook' };
const WEBHOOK_ENGINE = 'webhook-tool';

/**
 * A call's tools, with a span for each webhook tool call (the business's endpoint is a request
 * like an engine's) and its delivery failures counted. Built-in tools (end_call, transfer_call)
 * make no request of their own and pass straight through. The span names the tool (an identifier
 * from the agent config); the arguments and the result stay out.
 */
export function observeTools(runner: ToolRunner, tools: readonly ToolConfig[], observer: EngineObserver): ToolRunner {
  const webhooks = new Set(tools.flatMap((tool) => (tool.type === 'webhook' ? [tool.name] : [])));
  if (webhooks.size === 0) return runner;
  return {
    definitions: runner.definitions,
    fillerFor: (name) => runner.fillerFor(name),
    run: async (call, context) => {
      if (!webhooks.has(call.name)) return runner.run(call, context);
      const request = observer.request(context.callId, WEBHOOK_TARGET, WEBHOOK_ENGINE, SPAN.tool);
      request.note({ [ATTR.toolName]: call.name });
      try {
        const outcome = await runner.run(call, context);
        if (outcome.error === undefined) request.end();
        else request.fail(toolFailureOf(outcome.error));
        return outcome;
      } finally {
        request.end();
      }
    },
  };
}

/**
 * A webhook tool's error text (see WebhookTool) in bounded terms. The text itself may quote the
 * business's answer, so only its kind is kept. Errors before any request (arguments the schema
 * refused, a missing signing secret) mark the span but are not endpoint failures.
 */
export function toolFailureOf(error: string): EngineFailure {
  const status = /^business endpoint answered HTTP (\d{3})\b/.exec(error);
  if (status) return { errorType: 'http_error', httpStatus: Number(status[1]), cancelled: false };
  if (error.startsWith('business endpoint timed out')) return { errorType: 'timeout', cancelled: false };
  if (error.startsWith('business endpoint answered more than')) return { errorType: 'response_too_large', cancelled: false };
  if (error.startsWith('could not reach the business endpoint')) return { errorType: 'unavailable', cancelled: false };
  if (error.startsWith('the business endpoint was not called')) return { errorType: 'endpoint_refused', cancelled: false };
  if (error.startsWith('cancelled before the business endpoint answered')) return { errorType: 'cancelled', cancelled: true };
  return { errorType: 'invalid_call', cancelled: false, counted: false };
}
