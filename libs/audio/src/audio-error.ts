/** Every way this library refuses configuration or input. */
export type AudioErrorCode =
  | 'invalid_sample_rate'
  | 'invalid_quality'
  | 'invalid_kernel'
  | 'unsupported_kernel'
  | 'invalid_frame_length'
  | 'output_too_small'
  | 'invalid_tone'
  | 'invalid_signal'
  | 'wav_not_riff'
  | 'wav_truncated'
  | 'wav_missing_chunk'
  | 'wav_unsupported_format'
  | 'wav_invalid_header';

/**
 * Thrown for bad configuration or malformed audio. The same input fails the same way every time,
 * so `retryable` is false: callers should log and drop the input, not retry.
 */
export class AudioError extends Error {
  readonly retryable = false;

  constructor(
    readonly code: AudioErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'AudioError';
  }
}
