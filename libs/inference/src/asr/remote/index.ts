export { OpenAiTranscriptionAsr, type OpenAiTranscriptionAsrOptions } from './openai-transcription-asr';
