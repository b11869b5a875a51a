/** What went wrong on the simulated Twilio side; tests match on `code`, the CLI prints `message`. */
export type TwilioCallerErrorCode =
  | 'SERVER_UNREACHABLE'
  | 'WEBHOOK_HTTP_ERROR'
  | 'TWIML_INVALID'
  | 'CALL_NOT_CONNECTED'
  | 'MEDIA_UPGRADE_REJECTED'
  | 'MEDIA_SOCKET_ERROR'
  | 'SOCKET_NOT_OPEN'
  | 'INVALID_ARGUMENT'
  | 'TIMEOUT';

export interface TwilioCallerErrorDetails {
  /** True when the same request may succeed later (server still starting, transient network error). */
  retryable: boolean;
  httpStatus?: number;
  /** First few hundred characters of the response body, for the error message of a failed webhook. */
  responseBody?: string;
  cause?: unknown;
}

export class TwilioCallerError extends Error {
  readonly retryable: boolean;
  readonly httpStatus: number | undefined;
  readonly responseBody: string | undefined;

  constructor(
    readonly code: TwilioCallerErrorCode,
    message: string,
    details: TwilioCallerErrorDetails,
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'TwilioCallerError';
    this.retryable = details.retryable;
    this.httpStatus = details.httpStatus;
    this.responseBody = details.responseBody;
  }
}
