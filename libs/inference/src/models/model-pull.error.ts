/**
 * Why a pull failed. `retryable`: running the same pull again may succeed (and resumes the kept
 * partial download); false means something must change first (token, catalog, disk).
 */
export type ModelPullErrorCode =
  | 'unknown_model'
  | 'builtin_model'
  | 'offline'
  | 'interrupted'
  | 'http_error'
  | 'unauthorized'
  | 'not_found'
  | 'checksum_mismatch'
  | 'size_mismatch'
  | 'filesystem';

export class ModelPullError extends Error {
  override readonly name = 'ModelPullError';

  constructor(
    readonly code: ModelPullErrorCode,
    message: string,
    readonly retryable: boolean,
    options?: { cause?: unknown; httpStatus?: number },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.httpStatus = options?.httpStatus;
  }

  readonly httpStatus: number | undefined;
}
