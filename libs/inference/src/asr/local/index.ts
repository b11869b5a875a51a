export { LocalWhisperAsr, whisperDecoderBatching, type LocalWhisperAsrOptions } from './local-whisper-asr';
export type { TranscribeOptions, Transcription } from './whisper-transcriber';
export { readWhisperModelFolder, type WhisperModelFolder, type WhisperDecoderLayout } from './whisper-model-folder';
export { WhisperSpecialTokens } from './whisper-special-tokens';
export { ByteLevelBpeTokenizer } from './byte-level-bpe-tokenizer';
export { BYTE_TO_CHAR, byteCharsToBytes, pretokenize } from './byte-level-encoding';
export { WhisperLogMel, LOG_MEL_SILENCE, type WhisperLogMelOptions, type LogMelInputOptions } from './features/whisper-log-mel';
