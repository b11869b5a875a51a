import type { EngineTimings } from '../contracts';

/**
 * The LLM contract the conversation runtime drives. Messages and tools use the OpenAI Chat
 * Completions wire shape, so a conversation history can be sent as it is to any OpenAI-compatible
 * server; a local (ONNX) model implements the same interface and maps from this shape itself.
 */

/** A JSON Schema object describing a tool's arguments. */
export type JsonSchema = Record<string, unknown>;

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type ChatMessage =
  | { role: 'system'; content: string; name?: string }
  | { role: 'user'; content: string; name?: string }
  | { role: 'assistant'; content: string | null; tool_calls?: ToolCall[]; name?: string }
  | { role: 'tool'; content: string; tool_call_id: string };

export interface ToolDefinition {
  name: string;
  description?: string;
  parameters: JsonSchema;
}

export interface LlmUsage {
  inputTokens: number;
  /** Input tokens served from the provider's prompt cache (billed lower); 0 when not reported. */
  cachedInputTokens: number;
  outputTokens: number;
}

export type LlmEvent =
  | { type: 'text'; delta: string }
  /** A complete tool call: `arguments` is the whole JSON text the model produced. */
  | { type: 'tool_call'; id: string; name: string; arguments: string }
  /** Always last. `usage` is null when the server did not report it. */
  | { type: 'done'; finishReason: string; usage: LlmUsage | null; timings: EngineTimings };

export interface LlmRequest {
  callId: string;
  messages: ChatMessage[];
  tools?: ToolDefinition[];
  temperature?: number;
  maxTokens?: number;
  signal?: AbortSignal;
}

export interface LlmEngine {
  readonly name: string;
  /**
   * Streams one reply. Failures (before or during the stream) reject the iteration with an
   * EngineError; breaking out of the loop or aborting `signal` stops the request.
   */
  stream(request: LlmRequest): AsyncIterable<LlmEvent>;
}
