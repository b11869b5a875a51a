export type { ChatMessage, JsonSchema, LlmEngine, LlmEvent, LlmRequest, LlmUsage, ToolCall, ToolDefinition } from './llm-engine';
export { OpenAiChatLlm, type OpenAiChatLlmOptions } from './openai-chat-llm';
export { ChatStreamAssembler, type ChatStreamOutput } from './chat-stream-assembler';
export { buildChatRequestBody, type ChatRequestDefaults } from './chat-request-body';
export { observedLlm } from './observed-llm';
