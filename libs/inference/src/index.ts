/**
 * @switchboard/inference: local model hosting (onnxruntime-node in worker threads, micro-batching,
 * per-call compute accounting), the model registry, and the engines behind small interfaces:
 * VAD, turn detection, ASR, LLM, TTS and speech-to-speech. Each area can also be imported on its
 * own (`@switchboard/inference/vad`, ...), which keeps unrelated engines out of a process.
 */
export * from './contracts';
export * from './runtime';
export * from './models';
export * from './vad';
export * from './turn';
export * from './turn-model';
export * from './asr/asr-engine';
export * from './asr/observed-asr';
export * from './asr/local';
export * from './asr/remote';
export * from './llm';
export * from './tts/tts-engine';
export * from './tts/observed-tts';
export * from './tts/local';
export * from './tts/remote';
export * from './tts/flite';
export * from './speech-to-speech';
export * from './remote';
export * from './llm/local';
