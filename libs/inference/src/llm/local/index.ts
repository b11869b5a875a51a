export { LocalOnnxLlm, llmStepBatching, type LocalOnnxLlmOptions } from './local-onnx-llm';
export { readLlmModelFolder, type ChatTemplateSource, type LlmModelFolder } from './llm-model-folder';
export { LlmTokenizer } from './llm-tokenizer';
export { ModelChatTemplate } from './chat-template';
export { KvCacheSequence, type DecoderCacheShape } from './kv-cache-sequence';
export { IncrementalTextDecoder } from './incremental-text-decoder';
export { ToolCallStreamParser, QWEN_TOOL_CALL_MARKUP, type ToolCallMarkup, type ToolCallParserOutput } from './tool-call-stream-parser';
export { TokenSampler, type SamplingSettings } from './token-sampler';
