export { OpenAiSpeechTts, type OpenAiSpeechTtsOptions } from './openai-speech-tts';
export { Pcm16ByteAssembler } from './pcm16-byte-assembler';
export { QueuedTtsStream, type TtsChunkSink, type TtsProducer } from './queued-tts-stream';
