export { EngineError, type EngineErrorCode } from './engine-error';
export type { EngineTimings } from './engine-timings';
export type { ComputeUsageEntry, ComputeUsageSink, InferenceDevice } from './compute-usage';
export type { TensorData, TensorElementType } from './tensor';
export type { InferenceRuntime, ModelHandle, ModelLoadSpec, ModelRunResult, ModelSequence, RunContext, SequenceStepSpec } from './inference-runtime';
export type {
  CapabilityObserver,
  CompletionReport,
  EngineRequestInfo,
  LlmDoneEvent,
  SpeechToSpeechReport,
  SynthesisReport,
  SynthesizedAudio,
  TranscriptionReport,
} from './capability-observer';
