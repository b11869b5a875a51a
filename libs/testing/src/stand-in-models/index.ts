/**
 * Stand-in ONNX models (dev and test tooling, built with onnx-proto): the real models' signatures
 * and folder layouts with small seeded weights. Not for production paths.
 */
export { buildStandInModels, INT8_STAND_INS, standInModelPaths, STAND_IN_MODEL_NAMES, type BuildStandInOptions, type StandInModelName, type StandInModelPaths } from './build-stand-in-models';
export { writeWhisperStandIn, type WhisperStandInOptions } from './whisper-stand-in';
export { writeKokoroStandIn } from './kokoro-stand-in';
export { writePiperStandIn, type PiperStandInOptions } from './piper-stand-in';
export { writeSmartTurnStandIn } from './smart-turn-stand-in';
export { writeDecoderLlmStandIn, DECODER_LLM_TOOL_REPLY, type DecoderLlmStandInOptions } from './decoder-llm.stand-in';
export { DECODER_LLM_CHAT_TEMPLATES, type DecoderLlmChatTemplate } from './decoder-llm-chat-templates';
export { buildDecoderLlmVocabulary, QWEN2_SPLIT_PATTERN } from './decoder-llm-vocabulary';
export { WHISPER_DIMENSIONS, type StandInSize } from './whisper-dimensions';
export { buildWhisperVocabulary } from './whisper-vocabulary';
export { onnxSignature } from './onnx-signature';
export type { WhisperDecoderVariant } from './whisper-decoder-graph';
