export { KokoroTts, type KokoroTtsOptions } from './kokoro-tts';
export { PiperTts, type PiperTtsOptions } from './piper-tts';
export { PlainCharacterPhonemizer, type Phonemizer } from './phonemizer';
export { EspeakProcessPhonemizer, type EspeakProcessPhonemizerOptions } from './espeak-process-phonemizer';
export { splitSentences } from './sentence-splitter';
export { SentenceTtsStream, type SentenceAudio, type SentenceSynthesizer } from './sentence-tts-stream';
