import { EngineError } from '../../contracts';
import type { ChatMessage, ToolCall, ToolDefinition } from '../llm-engine';
import type { ChatMlTemplate } from './chat-template';
import { pythonJsonDumps } from './python-json';

const TOOL_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

// Qwen2.5's tool instructions, word for word: the model was trained on exactly this text.
const TOOLS_INTRO =
  '# Tools\n\nYou may call one or more functions to assist with the user query.\n\n' +
  'You are provided with function signatures within <tools></tools> XML tags:\n<tools>';
const TOOLS_OUTRO =
  '\n</tools>\n\nFor each function call, return a json object with function name and arguments within ' +
  '<tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>';

/**
 * Renders a conversation the way a ChatML chat template does with `add_generation_prompt=True`,
 * following Qwen2.5's template for tools: their definitions in a `<tools>` block of the system
 * turn, earlier calls as `<tool_call>` spans in the assistant turn, tool results as
 * `<tool_response>` blocks in a user turn (consecutive results share one turn).
 */
export class ChatMlPromptRenderer {
  constructor(
    private readonly engine: string,
    private readonly template: ChatMlTemplate,
  ) {}

  render(messages: readonly ChatMessage[], tools: readonly ToolDefinition[] = []): string {
    this.validate(messages, tools);
    const first = messages[0];
    const systemContent = first?.role === 'system' ? first.content : this.template.defaultSystemPrompt;
    let prompt = '';
    if (tools.length > 0) {
      const intro = systemContent === undefined ? '' : `${systemContent}\n\n`;
      const definitions = tools.map((tool) => `\n${pythonJsonDumps({ type: 'function', function: toolFunction(tool) })}`).join('');
      prompt += `<|im_start|>system\n${intro}${TOOLS_INTRO}${definitions}${TOOLS_OUTRO}<|im_end|>\n`;
    } else if (systemContent !== undefined) {
      prompt += `<|im_start|>system\n${systemContent}<|im_end|>\n`;
    }
    messages.forEach((message, index) => {
      if (index === 0 && message.role === 'system') return;
      if (message.role === 'tool') {
        if (messages[index - 1]?.role !== 'tool') prompt += '<|im_start|>user';
        prompt += `\n<tool_response>\n${message.content}\n</tool_response>`;
        if (messages[index + 1]?.role !== 'tool') prompt += '<|im_end|>\n';
        return;
      }
      if (message.role === 'assistant' && message.tool_calls && message.tool_calls.length > 0) {
        prompt += `<|im_start|>assistant${message.content ? `\n${message.content}` : ''}`;
        for (const call of message.tool_calls) prompt += renderToolCall(call);
        prompt += '<|im_end|>\n';
        return;
      }
      prompt += `<|im_start|>${message.role}\n${message.content ?? ''}<|im_end|>\n`;
    });
    return `${prompt}<|im_start|>assistant\n`;
  }

  private validate(messages: readonly ChatMessage[], tools: readonly ToolDefinition[]): void {
    if (!Array.isArray(messages) || messages.length === 0) throw this.badRequest('a chat request needs at least one message');
    messages.forEach((message, position) => {
      if (!['system', 'user', 'assistant', 'tool'].includes(message.role)) throw this.badRequest(`message ${position} has unknown role "${String(message.role)}"`);
      const content = message.content as unknown;
      if (typeof content !== 'string' && !(message.role === 'assistant' && content === null)) {
        throw this.badRequest(`message ${position} (${message.role}) content must be a string`);
      }
      const usesTools = message.role === 'tool' || (message.role === 'assistant' && (message.tool_calls?.length ?? 0) > 0);
      if (usesTools && !this.template.supportsTools) throw this.badRequest(`message ${position} is a tool call or result, but this model's chat template has no tool support`);
    });
    if (tools.length > 0 && !this.template.supportsTools) throw this.badRequest("tools were given, but this model's chat template has no tool support");
    for (const tool of tools) {
      if (!TOOL_NAME_PATTERN.test(tool.name)) throw this.badRequest(`tool name "${tool.name}" must be 1-64 letters, digits, '_' or '-'`);
    }
  }

  private badRequest(detail: string): EngineError {
    return new EngineError(this.engine, 'bad_request', `${this.engine}: ${detail}`, false);
  }
}

function toolFunction(tool: ToolDefinition): Record<string, unknown> {
  return tool.description === undefined ? { name: tool.name, parameters: tool.parameters } : { name: tool.name, description: tool.description, parameters: tool.parameters };
}

/** An earlier call as the model wrote it; `arguments` is JSON text on the wire, an object in Qwen's prompt. */
function renderToolCall(call: ToolCall): string {
  let args: unknown = call.function.arguments;
  try {
    args = JSON.parse(call.function.arguments);
  } catch {
    // Not JSON: rendered as a string, as the template's tojson would.
  }
  return `\n<tool_call>\n{"name": "${call.function.name}", "arguments": ${pythonJsonDumps(args)}}\n</tool_call>`;
}
