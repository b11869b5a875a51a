export { createInferenceRuntime, OnnxInferenceRuntime } from './onnx-inference-runtime';
export { OnnxModelHandle } from './onnx-model-handle';
export type { BatchRecord, InferenceLogger, InferenceRuntimeOptions } from './inference-runtime-options';
