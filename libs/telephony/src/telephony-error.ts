/** Every way this library refuses caller-supplied configuration (URLs, TwiML inputs, token TTLs). */
export type TelephonyErrorCode =
  | 'invalid_public_base_url'
  | 'invalid_stream_url'
  | 'stream_url_not_wss'
  | 'stream_url_has_query'
  | 'invalid_status_callback_url'
  | 'invalid_parameter_name'
  | 'parameter_too_long'
  | 'invalid_auth_token'
  | 'invalid_token_ttl'
  | 'invalid_account_sid';

/**
 * Thrown for programming or configuration mistakes, never for bad data arriving from Twilio (those
 * are returned as results). Retrying with the same input cannot succeed, hence `retryable = false`.
 */
export class TelephonyError extends Error {
  readonly retryable = false;

  constructor(
    readonly code: TelephonyErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'TelephonyError';
  }
}
