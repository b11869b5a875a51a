import { RestException } from 'twilio';
import TwilioServiceException from 'twilio/lib/base/TwilioServiceException';

/** Why a Twilio REST request failed, safe to log and to show an API client. */
export interface TwilioFailure {
  /** Twilio's HTTP status; null when Twilio could not be reached. */
  httpStatus: number | null;
  /** Twilio's error code (e.g. 21211 invalid 'To' number); null when it sent none. */
  code: number | null;
  message: string;
}

/** Twilio's own error answer (RestException, or the RFC 9457 TwilioServiceException newer endpoints use). */
export function isTwilioErrorAnswer(error: unknown): error is RestException | TwilioServiceException {
  return error instanceof RestException || error instanceof TwilioServiceException;
}

/**
 * What may be said of a transport error (axios): it carries the request config, Authorization
 * header included, so only its code or message is kept.
 */
export function transportErrorDetail(error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : ((error as Error | undefined)?.message ?? String(error));
}

/** Twilio's own error answers are kept as Twilio worded them; transport errors as transportErrorDetail. */
export function describeTwilioFailure(error: unknown): TwilioFailure {
  if (isTwilioErrorAnswer(error)) return { httpStatus: error.status, code: error.code ?? null, message: error.message };
  return { httpStatus: null, code: null, message: `could not reach Twilio: ${transportErrorDetail(error)}` };
}
