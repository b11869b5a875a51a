export { createInferenceRuntime, OnnxInferenceRuntime, type ProviderReport } from './onnx-inference-runtime';
export { chooseProvider, INFERENCE_DEVICES, modelBaseName, pinFor, providerForModel, PROVIDER_LABELS, settingFor } from './execution-provider';
export { choosePrecision, MODEL_PRECISIONS, PRECISION_FILE_SUFFIXES, type ModelPrecision, type PrecisionFallback } from './model-precision';
export type { ModelFallback, ProviderFallback, ProviderProbe, ProviderProbeResult, RequestedDevice } from './execution-provider';
export { OnnxModelHandle } from './onnx-model-handle';
export type { BatchRecord, InferenceLogger, InferenceRuntimeOptions } from './inference-runtime-options';
export type { TransferStats } from './worker-pool';
export { SEQUENCE_LOST_MESSAGE } from './sequence-store';
