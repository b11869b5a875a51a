import { EngineError } from '../contracts';
import type { LlmRequest } from './llm-engine';

export interface ChatRequestDefaults {
  model: string;
  temperature?: number;
  maxTokens?: number;
  /**
   * 'max_tokens' (vLLM, Ollama, Groq, older OpenAI models) or 'max_completion_tokens' (what
   * OpenAI's reasoning models require).
   */
  maxTokensField: 'max_tokens' | 'max_completion_tokens';
  /** Ask for a usage chunk at the end (`stream_options.include_usage`). */
  includeUsage: boolean;
  /** Provider-specific fields merged into the body (e.g. Ollama `keep_alive`, `parallel_tool_calls`). */
  extraBody?: Record<string, unknown>;
}

/** OpenAI's rule for function names; checked here so a bad tool fails before any request. */
const TOOL_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** The streaming Chat Completions body for `request`; throws a non-retryable bad_request for bad input. */
export function buildChatRequestBody(engine: string, request: LlmRequest, defaults: ChatRequestDefaults): Record<string, unknown> {
  if (!Array.isArray(request.messages) || request.messages.length === 0) {
    throw new EngineError(engine, 'bad_request', `${engine}: a chat request needs at least one message`, false);
  }
  for (const [position, message] of request.messages.entries()) {
    if (!['system', 'user', 'assistant', 'tool'].includes(message.role)) {
      throw new EngineError(engine, 'bad_request', `${engine}: message ${position} has unknown role "${String(message.role)}"`, false);
    }
    if (message.role === 'tool' && !message.tool_call_id) {
      throw new EngineError(engine, 'bad_request', `${engine}: tool message ${position} has no tool_call_id`, false);
    }
  }
  for (const tool of request.tools ?? []) {
    if (!TOOL_NAME_PATTERN.test(tool.name)) {
      throw new EngineError(engine, 'bad_request', `${engine}: tool name "${tool.name}" must be 1-64 letters, digits, '_' or '-'`, false);
    }
  }
  const temperature = request.temperature ?? defaults.temperature;
  const maxTokens = request.maxTokens ?? defaults.maxTokens;
  const body: Record<string, unknown> = {
    ...defaults.extraBody,
    model: defaults.model,
    messages: request.messages,
    stream: true,
  };
  if (defaults.includeUsage) body.stream_options = { include_usage: true };
  if (temperature !== undefined) body.temperature = temperature;
  if (maxTokens !== undefined) body[defaults.maxTokensField] = maxTokens;
  if (request.tools !== undefined && request.tools.length > 0) {
    body.tools = request.tools.map((tool) => ({
      type: 'function',
      function: { name: tool.name, ...(tool.description === undefined ? {} : { description: tool.description }), parameters: tool.parameters },
    }));
  }
  return body;
}
