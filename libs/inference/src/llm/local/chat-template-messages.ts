import type { ChatMessage, ToolCall, ToolDefinition } from '../llm-engine';

/**
 * The conversation in the shape chat templates are written for (transformers' apply_chat_template
 * input): role and content on every message; an assistant's calls as `tool_calls` of
 * `{ type: 'function', function: { name, arguments } }` with `arguments` an object, as Qwen2.5's
 * template prints it through `tojson` (the wire's JSON text would come out as a quoted string);
 * tool results as role `tool` with their `tool_call_id`.
 */
export function templateConversation(messages: readonly ChatMessage[]): Array<Record<string, unknown>> {
  return messages.map((message) => {
    switch (message.role) {
      case 'tool':
        return { role: 'tool', content: message.content, tool_call_id: message.tool_call_id };
      case 'assistant': {
        // Templates concatenate content as a string; a call-only turn has none.
        const turn: Record<string, unknown> = { role: 'assistant', content: message.content ?? '' };
        if (message.tool_calls && message.tool_calls.length > 0) turn['tool_calls'] = message.tool_calls.map(templateToolCall);
        return withName(turn, message.name);
      }
      default:
        return withName({ role: message.role, content: message.content }, message.name);
    }
  });
}

/** Tool definitions in the OpenAI function schema, which is what templates iterate over. */
export function templateTools(tools: readonly ToolDefinition[]): Array<Record<string, unknown>> {
  return tools.map((tool) => ({
    type: 'function',
    function: tool.description === undefined ? { name: tool.name, parameters: tool.parameters } : { name: tool.name, description: tool.description, parameters: tool.parameters },
  }));
}

function templateToolCall(call: ToolCall): Record<string, unknown> {
  return { id: call.id, type: 'function', function: { name: call.function.name, arguments: argumentsObject(call.function.arguments) } };
}

/** The JSON object the model wrote; text that is not one stays text (tojson then quotes it). */
function argumentsObject(text: string): unknown {
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? parsed : text;
  } catch {
    return text;
  }
}

function withName(turn: Record<string, unknown>, name: string | undefined): Record<string, unknown> {
  return name === undefined ? turn : { ...turn, name };
}
